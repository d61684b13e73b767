import { describe, expect, it } from "vitest";
import { DutyGate } from "../../src/cluster/duty-gate.ts";
import { onDuty } from "../../src/cluster/on-duty.ts";
import { deterministicId } from "../../src/events/store/deterministic-id.ts";
import { WorkflowHost } from "../../src/workflows/workflow-host.ts";
import { silentLogger } from "../support/fixtures.ts";
import { storesPerTest } from "../support/stores-per-test.ts";
import { cordonedInput, thingsWorkflow } from "../support/things-workflow.ts";

/**
 * A workflow's duty handed over and taken back (several orchestrators): while another holder ran it, that holder
 * recorded steps past the checkpoint it saved. Taken back, the host goes on from that checkpoint and finds those steps
 * stored, as at a start, rather than append them again at the revision it learns from the first conflict.
 */
const openStore = storesPerTest("shoal-workflow-duty-");

describe("a workflow taken back from another holder of its duty", () => {
  it("finds the steps the other holder recorded past its checkpoint, and appends none of them again", async () => {
    const store = openStore();
    const things = thingsWorkflow();
    const stream = `workflow-${things.name}`;
    const ran: string[] = [];
    const handlers = { thing: (c: { causationId: string }) => void ran.push(`${c.causationId}`) };
    const gate = new DutyGate("jobs", silentLogger);
    await gate.gained();
    const here = onDuty(new WorkflowHost(things, { store, checkpoints: store, handlers, logger: silentLogger }), gate);
    const [a1, b1, c1, d1, e1] = ["a1", "b1", "c1", "d1", "e1"].map((name, i) => cordonedInput(name, i + 1));
    await here.handle([a1!]);
    gate.lost();

    // The other holder handles b1, c1 and d1, recording their steps, and saves its checkpoint at b1 only.
    const there = new WorkflowHost(things, { store, handlers: { thing: () => undefined }, logger: silentLogger });
    await there.handle([b1!, c1!, d1!]);
    await store.save(here.name, b1!.position);

    // Taken back: the lane delivers what follows this host's own last batch; the checkpoint cuts it to c1 on.
    const handled = here.handle([b1!, c1!, d1!, e1!]);
    await gate.gained();
    await handled;
    expect(ran).toEqual(["a1", "c1", "d1", "e1"]);
    expect((await store.readStream(stream)).map((e) => e.id)).toEqual(
      ["a1", "b1", "c1", "d1", "e1"].map((input) => deterministicId(things.name, input)),
    );
  });
});
