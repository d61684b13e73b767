import { describe, expect, it } from "vitest";
import { jobOrderKey } from "../../../src/orchestrator/modules/job-flow-module.ts";
import { JobViews } from "../../../src/projections/jobs/job-views.ts";
import { workflowInputOf } from "../../../src/workflows/workflow-input.ts";
import { exampleEvent } from "../../support/example-events.ts";
import { envelopeOf } from "../../support/recorded-event.ts";

/** The job flow's order key: the job's id, for a job's events and its executions' alike. */
describe("the job flow's order key", () => {
  const views = new JobViews();
  views.handleEnvelope(envelopeOf("execution-e-known", exampleEvent("ExecutionCreated", "e-known", { JobID: "j-7" })));
  const keyOf = (stream: string, event: ReturnType<typeof exampleEvent>) =>
    jobOrderKey(views)(workflowInputOf(envelopeOf(stream, event))!);

  it("is a job's own id for its events", () => {
    expect(keyOf("job-j-9", exampleEvent("JobSubmitted", "j-9"))).toBe("j-9");
  });

  it("is the job id an ExecutionCreated carries, the read model not asked", () => {
    expect(keyOf("execution-e-new", exampleEvent("ExecutionCreated", "e-new", { JobID: "j-8" }))).toBe("j-8");
  });

  it("is the job of an execution the read model knows, for its later events", () => {
    expect(keyOf("execution-e-known", exampleEvent("ExecutionBidAccepted", "e-known"))).toBe("j-7");
  });

  it("is the stream of an execution the read model does not know yet, and of anything else", () => {
    expect(keyOf("execution-e-other", exampleEvent("ExecutionBidAccepted", "e-other"))).toBe("execution-e-other");
    expect(keyOf("node-n-1", exampleEvent("NodeCordoned", "n-1"))).toBe("node-n-1");
  });
});
