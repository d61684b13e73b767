import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ExecutionSpec } from "../../../src/compute/executor/executor.ts";
import { SimExecutor } from "../../../src/sim/sim-executor.ts";

/** A sim node's executor on the fake clock: what runs how long, what ends it, what it holds meanwhile. */
const GiB = 1024 ** 3;
const spec = (executionId: string, extra: Partial<ExecutionSpec> = {}): ExecutionSpec => ({
  executionId,
  image: "busybox",
  entrypoint: ["sh", "-c"],
  parameters: ["echo hi"],
  resources: { cpuMillis: 500, memoryBytes: GiB },
  ...extra,
});

let executor: SimExecutor;
beforeEach(() => {
  vi.useFakeTimers();
  executor = new SimExecutor("sim-1", { cpuMillis: 1000, memoryBytes: 4 * GiB }, 2000);
});
afterEach(() => vi.useRealTimers());

describe("SimExecutor", () => {
  it("runs an execution for the run time, holding its resources, then exits 0 with one line", async () => {
    const run = await executor.run(spec("e-1"));
    expect(await run.started).toBe(true);
    expect(executor.running()).toEqual(["e-1"]);
    expect(executor.ledger.free()).toEqual({ cpuMillis: 500, memoryBytes: 3 * GiB });
    let ended = false;
    void run.done.then(() => (ended = true));
    await vi.advanceTimersByTimeAsync(1999);
    expect(ended).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const result = await run.done;
    expect(result).toMatchObject({
      executionId: "e-1",
      state: "Completed",
      reason: "exited",
      runOutput: { STDOUT: "sim node sim-1 runs busybox sh -c echo hi for 2s\n", ExitCode: 0, ErrorMsg: "" },
    });
    expect(executor.running()).toEqual([]);
    expect(executor.ledger.free()).toEqual({ cpuMillis: 1000, memoryBytes: 4 * GiB });
  });

  it("runs what SHOAL_SIM_RUN says: a duration, or until cancelled", async () => {
    const short = await executor.run(spec("e-1", { env: { SHOAL_SIM_RUN: "100ms" } }));
    const service = await executor.run(spec("e-2", { env: { SHOAL_SIM_RUN: "until-stopped" } }));
    await vi.advanceTimersByTimeAsync(100);
    expect((await short.done).state).toBe("Completed");
    await vi.advanceTimersByTimeAsync(3_600_000);
    expect(executor.running()).toEqual(["e-2"]);
    expect(vi.getTimerCount()).toBe(0);
    const cancelled = await executor.cancel("e-2", "job stopped");
    expect(cancelled).toMatchObject({
      state: "Cancelled",
      reason: "cancelled",
      runOutput: { ExitCode: 143, ErrorMsg: "execution e-2 was cancelled: job stopped" },
    });
    expect(await service.done).toEqual(cancelled);
    expect(executor.running()).toEqual([]);
    await expect(executor.cancel("e-2")).rejects.toMatchObject({ kind: "NotFound" });
  });

  it("ends an execution at its timeout when that comes first", async () => {
    const run = await executor.run(spec("e-1", { timeoutMs: 500, env: { SHOAL_SIM_RUN: "until-stopped" } }));
    await vi.advanceTimersByTimeAsync(500);
    expect(await run.done).toMatchObject({
      state: "Failed",
      reason: "timeout",
      runOutput: { ExitCode: 137, ErrorMsg: "execution e-1 timed out: it ran past its 500ms timeout and was killed" },
    });
  });

  it("refuses, holding nothing, what it cannot read, what does not fit, and a network", async () => {
    expect(executor.refusal(spec("e-1", { env: { SHOAL_SIM_RUN: "soon" } }))).toMatchObject({
      kind: "BadRequest",
      message: 'execution e-1 has SHOAL_SIM_RUN="soon": a sim node reads it as a duration (e.g. 2s) or until-stopped',
    });
    await expect(executor.run(spec("e-1", { network: "Full" }))).rejects.toMatchObject({ kind: "BadRequest" });
    await executor.run(spec("e-2"));
    await executor.run(spec("e-3"));
    expect(await executor.bidRefusal(spec("e-4"))).toMatchObject({ kind: "Unavailable" });
    expect(executor.running()).toEqual(["e-2", "e-3"]);
  });

  it("shows a running execution's line in its logs; after a restart nothing of it is left", async () => {
    await executor.run(spec("e-1"));
    const chunks: string[] = [];
    for await (const c of executor.logs("e-1")) chunks.push(c.data.toString());
    expect(chunks).toEqual(["sim node sim-1 runs busybox sh -c echo hi for 2s\n"]);
    expect(await new SimExecutor("sim-1", { cpuMillis: 1000, memoryBytes: GiB }, 10).reconcile(["e-1"])).toEqual({
      adopted: [],
      removed: [],
      missing: ["e-1"],
      failed: [],
    });
    await executor.close();
    expect(vi.getTimerCount()).toBe(0);
  });
});
