import { describe, expect, it } from "vitest";
import { JobViews } from "../../../src/projections/jobs/job-views.ts";
import { toExisting } from "../../../src/scheduler/existing-execution.ts";
import { exampleEvent } from "../../support/example-events.ts";
import { envelopeOf } from "../../support/recorded-event.ts";

/** An execution as placement counts it, from the read model's state after `events`. */
function existing(id: string, ...events: ReturnType<typeof exampleEvent>[]) {
  const views = new JobViews();
  for (const event of [exampleEvent("ExecutionCreated", id), ...events])
    views.handleEnvelope(envelopeOf(`execution-${id}`, event));
  return toExisting(views.execution(id)!);
}

describe("an execution as placement counts it", () => {
  it("keeps the reason its node refused to bid, for the node's verdict to name", () => {
    const refused = existing(
      "e-refused",
      exampleEvent("ExecutionBidAsked", "e-refused"),
      exampleEvent("ExecutionBidDeclined", "e-refused", { Reason: "volume /srv/private is not allowlisted" }),
    );
    expect(refused).toMatchObject({ state: "AskForBidRejected", refusal: "volume /srv/private is not allowlisted" });
    expect(existing("e-new")).not.toHaveProperty("refusal");
  });
});
