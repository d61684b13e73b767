import { describe, expect, it } from "vitest";
import { CapacityLedger } from "../../../../src/compute/executor/capacity-ledger.ts";

const MIB = 1024 * 1024;

describe("CapacityLedger", () => {
  it("holds what executions reserve and frees it on release", () => {
    const ledger = new CapacityLedger("n1", { cpuMillis: 2000, memoryBytes: 1024 * MIB });
    ledger.reserve("e-1", { cpuMillis: 1500, memoryBytes: 256 * MIB });
    ledger.reserve("e-2", { cpuMillis: 500, memoryBytes: 768 * MIB });
    expect(ledger.free()).toEqual({ cpuMillis: 0, memoryBytes: 0 });
    expect(ledger.running()).toEqual(["e-1", "e-2"]);
    ledger.release("e-1");
    expect(ledger.free()).toEqual({ cpuMillis: 1500, memoryBytes: 256 * MIB });
    ledger.release("e-1");
    expect(ledger.used()).toEqual({ cpuMillis: 500, memoryBytes: 768 * MIB });
  });

  it("refuses while busy as Unavailable, naming asked, free and capacity, and holds nothing", () => {
    const ledger = new CapacityLedger("n1", { cpuMillis: 1000, memoryBytes: 512 * MIB });
    ledger.reserve("e-1", { cpuMillis: 200, memoryBytes: 384 * MIB });
    let error: unknown;
    try {
      ledger.reserve("e-2", { cpuMillis: 100, memoryBytes: 256 * MIB });
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({
      kind: "Unavailable",
      message:
        "node n1 cannot fit execution e-2 now: it asks for 100m CPU and 256MiB memory; free: 800m CPU of 1000m CPU, 128MiB of 512MiB memory (1 running)",
    });
    expect(ledger.holds("e-2")).toBe(false);
  });

  it("refuses what exceeds the whole node as BadRequest: waiting would not help", () => {
    const ledger = new CapacityLedger("n1", { cpuMillis: 1000, memoryBytes: 512 * MIB });
    expect(ledger.refusal("e-1", { cpuMillis: 1001, memoryBytes: 1 })).toMatchObject({
      kind: "BadRequest",
      message:
        "node n1 can never fit execution e-1: it asks for 1001m CPU and 1 memory; the node has 1000m CPU and 512MiB memory in all",
    });
  });

  it.each([
    [{ cpuMillis: 0, memoryBytes: MIB }],
    [{ cpuMillis: 100, memoryBytes: 0 }],
    [{ cpuMillis: 1.5, memoryBytes: MIB }],
    [{ cpuMillis: -1, memoryBytes: MIB }],
    [{ cpuMillis: Number.NaN, memoryBytes: MIB }],
  ])("refuses resources that are not whole and above 0: %o", (wanted) => {
    const ledger = new CapacityLedger("n1", { cpuMillis: 1000, memoryBytes: 512 * MIB });
    expect(ledger.refusal("e-1", wanted)?.kind).toBe("BadRequest");
  });

  it("refuses a second reservation of one execution", () => {
    const ledger = new CapacityLedger("n1", { cpuMillis: 1000, memoryBytes: 512 * MIB });
    ledger.reserve("e-1", { cpuMillis: 100, memoryBytes: MIB });
    expect(ledger.refusal("e-1", { cpuMillis: 100, memoryBytes: MIB })?.kind).toBe("BadRequest");
  });

  it("counts an adopted execution even past capacity, so that nothing more is placed", () => {
    const ledger = new CapacityLedger("n1", { cpuMillis: 1000, memoryBytes: 512 * MIB });
    ledger.adopt("e-old", { cpuMillis: 1200, memoryBytes: 64 * MIB });
    expect(ledger.refusal("e-new", { cpuMillis: 1, memoryBytes: 1 })?.kind).toBe("Unavailable");
  });
});
