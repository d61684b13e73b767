import { describe, expect, it } from "vitest";
import { StopSteps } from "../../../src/lifecycle/stop-steps.ts";
import { Later, type Module, PHASES } from "../../../src/orchestrator/module.ts";
import { runModuleSteps, startInPhases, type StartUpPhase } from "../../../src/orchestrator/start-up-phases.ts";
import { waitFor } from "../../support/shoal-process.ts";
import { capturedLogger } from "../../support/captured-logger.ts";

/** A module that records each step it takes and adds a stop step named after it. */
function recordingModule(name: string, seen: string[], stops: StopSteps): Module {
  const step = (phase: string) => () => {
    seen.push(`${name}:${phase}`);
    stops.add({ name: `${name} after ${phase}`, run: () => void seen.push(`stop ${name} after ${phase}`) });
  };
  return { name, recover: step("recover"), follow: step("follow"), arm: step("arm"), serve: step("serve") };
}

function phasesOver(modules: readonly Module[], logger: ReturnType<typeof capturedLogger>["logger"]): StartUpPhase[] {
  return PHASES.map((name) => ({
    name,
    run: () => (name === "open" ? undefined : runModuleSteps(modules, name, logger)),
  }));
}

describe("start-up phases", () => {
  it("runs the phases in order, each module's step in the list's order, skipping the phases it has no step in", async () => {
    const { logger, records } = capturedLogger();
    const stops = new StopSteps(logger);
    const seen: string[] = [];
    const modules = [recordingModule("nodes", seen, stops), recordingModule("jobs", seen, stops)];
    await startInPhases(phasesOver(modules, logger), { logger, stops });
    expect(seen).toEqual([
      "nodes:recover",
      "jobs:recover",
      "nodes:follow",
      "jobs:follow",
      "nodes:arm",
      "jobs:arm",
      "nodes:serve",
      "jobs:serve",
    ]);
    // Each phase says when it starts and how long it took.
    expect(records.filter((r) => r.msg === "start-up phase starting").map((r) => r.phase)).toEqual([...PHASES]);
    const done = records.filter((r) => r.msg === "start-up phase done");
    expect(done.map((r) => r.phase)).toEqual([...PHASES]);
    for (const r of done) expect(typeof r.ms).toBe("number");
    // Nothing stopped on a good start.
    expect(seen.some((s) => s.startsWith("stop"))).toBe(false);
  });

  it("a failing phase stops start-up: the later phases never run, the stop steps added so far run last first", async () => {
    const { logger, records } = capturedLogger();
    const stops = new StopSteps(logger);
    const seen: string[] = [];
    const failing: Module = {
      name: "publisher",
      follow: () => {
        seen.push("publisher:follow");
        throw new Error("JetStream is not enabled");
      },
    };
    const modules = [recordingModule("nodes", seen, stops), failing, recordingModule("jobs", seen, stops)];
    await expect(startInPhases(phasesOver(modules, logger), { logger, stops })).rejects.toThrow(
      "JetStream is not enabled",
    );
    expect(seen).toEqual([
      "nodes:recover",
      "jobs:recover",
      "nodes:follow",
      "publisher:follow",
      // The modules after it in the phase and every later phase never ran; what started stops, last first.
      "stop nodes after follow",
      "stop jobs after recover",
      "stop nodes after recover",
    ]);
    const failed = records.filter((r) => r.msg === "start-up phase failed");
    expect(failed.map((r) => r.phase)).toEqual(["follow"]);
    expect(typeof failed[0]?.ms).toBe("number");
    expect(records.filter((r) => r.msg === "start-up phase done").map((r) => r.phase)).toEqual(["open", "recover"]);
    // A second stop (the caller's, or a signal's) runs nothing again.
    await stops.stop();
    expect(seen.filter((s) => s.startsWith("stop"))).toHaveLength(3);
  });

  it("a phase or module step that takes long says so while it runs, with where it waits", async () => {
    const { logger, records } = capturedLogger();
    const stops = new StopSteps(logger);
    const said = (msg: string) => records.filter((r) => r.msg === msg).length;
    // Takes as long as it takes to be reported (a fixed time is not enough on a busy machine, whose timers drift).
    const slow: Module = {
      name: "cluster",
      recover: () =>
        waitFor(
          () => said("start-up step still running") >= 2 && said("start-up phase still running") >= 1,
          10_000,
          () => "reported as still running",
        ),
    };
    const phases: StartUpPhase[] = [{ name: "recover", run: () => runModuleSteps([slow], "recover", logger, 40) }];
    await startInPhases(phases, { logger, stops, stillRunningEveryMs: 40 });
    const steps = records.filter((r) => r.msg === "start-up step still running");
    expect(steps.length).toBeGreaterThanOrEqual(2);
    expect(steps[0]).toMatchObject({ level: 40, phase: "recover", module: "cluster" });
    expect(records.filter((r) => r.msg === "start-up phase still running")[0]).toMatchObject({ phase: "recover" });
    // Nothing more once it is done.
    const logged = records.length;
    await new Promise((r) => setTimeout(r, 100));
    expect(records.length).toBe(logged);
  });

  it("a stop step that hangs is bounded, and the steps after it still run", async () => {
    const { logger, records } = capturedLogger();
    const stops = new StopSteps(logger);
    const ran: string[] = [];
    stops.add({ name: "releasing the lock", run: () => void ran.push("lock") });
    stops.add({ name: "closing a wedged NATS", run: () => new Promise(() => undefined), timeoutMs: 20 });
    expect(stops.order).toEqual(["closing a wedged NATS", "releasing the lock"]);
    await stops.stop();
    expect(ran).toEqual(["lock"]);
    expect(records.some((r) => r.msg === "closing a wedged NATS did not finish within 20ms; closing hard")).toBe(true);
  });

  it("what a phase makes for later ones is read only once made, and a read before says what and which phase", () => {
    const lane = new Later<number>("the node-views processor", "follow");
    expect(() => lane.get()).toThrow("the node-views processor is read before its follow phase made it");
    lane.set(7);
    expect(lane.get()).toBe(7);
    expect(() => lane.set(8)).toThrow("the node-views processor was made twice");
  });
});
