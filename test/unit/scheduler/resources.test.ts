import { describe, expect, it } from "vitest";
import {
  addResources,
  fitsWithin,
  formatCores,
  formatResources,
  fromBacalhauResources,
  humanBytes,
  subtractResources,
} from "../../../src/scheduler/resources.ts";
import { EMPTY_LEDGER, ledgerOf, placedOn, release, reserve } from "../../../src/scheduler/capacity-ledger.ts";
import { GB, MB, res } from "./scheduler-fixtures.ts";

describe("resources in Bacalhau's units", () => {
  it.each([
    [{ CPU: 2, Memory: 4 * GB, Disk: 100 * GB, GPU: 1 }, res(2000, 4 * GB, 100 * GB, 1)],
    // Bacalhau's default allocation is 80% of the machine: fractions of cores become exact millicores.
    [{ CPU: 0.29 }, res(290)],
    [{ CPU: 1.6 }, res(1600)],
    [{ CPU: 0.7 }, res(700)],
    [{ CPU: 0.0005 }, res(0)],
    [{}, res(0)],
  ])("%j is %j", (bacalhau, shoal) => {
    expect(fromBacalhauResources(bacalhau)).toEqual(shoal);
  });

  it("adds and subtracts exactly, never below zero, and compares every resource", () => {
    // 0.1 + 0.2 cores is exactly 0.3 cores in millicores.
    expect(addResources(res(100), res(200))).toEqual(res(300));
    expect(subtractResources(res(300, GB), res(100, 2 * GB))).toEqual(res(200, 0));
    expect(fitsWithin(res(300, GB), res(300, GB))).toBe(true);
    expect(fitsWithin(res(301, GB), res(300, GB))).toBe(false);
    expect(fitsWithin(res(0, 0, 0, 1), res(9000, 9 * GB, 9 * GB, 0))).toBe(false);
  });

  it.each([
    [0, "0 B"],
    [9, "9 B"],
    [10, "10 B"],
    [999, "999 B"],
    [1000, "1.0 kB"],
    [1500, "1.5 kB"],
    [12 * GB, "12 GB"],
    [GB, "1.0 GB"],
    [4 * GB, "4.0 GB"],
    [79_400_000_000, "79 GB"],
    [9_950_000, "10 MB"],
    [512 * MB, "512 MB"],
    [2 ** 30, "1.1 GB"],
  ])("humanBytes(%d) is %s (go-humanize)", (bytes, text) => {
    expect(humanBytes(bytes)).toBe(text);
  });

  it.each([
    [200, "0.20"],
    [0, "0.00"],
    [1500, "1.50"],
    // Exact ties round to even, as Go's %.2f.
    [125, "0.12"],
    [375, "0.38"],
    [1625, "1.62"],
    // Not ties in binary: the nearest value wins, as in Go.
    [5, "0.01"],
    [15, "0.01"],
  ])("formatCores(%d) is %s (Go's %%.2f)", (m, text) => {
    expect(formatCores(m)).toBe(text);
  });

  it("prints resources as Bacalhau's Resources.String()", () => {
    expect(formatResources(res(200, 12 * GB, 79 * GB, 0))).toBe("{CPU: 0.20, Memory: 12 GB, Disk: 79 GB, GPU: 0}");
  });
});

describe("the capacity ledger", () => {
  it("adds what is placed per node and gives it back on release, leaving the old ledger as it was", () => {
    const one = ledgerOf([{ nodeId: "a", resources: res(500, GB) }]);
    const two = reserve(one, [
      { nodeId: "a", resources: res(250, GB) },
      { nodeId: "b", resources: res(1000) },
    ]);
    expect(placedOn(one, "a")).toEqual(res(500, GB));
    expect(placedOn(two, "a")).toEqual(res(750, 2 * GB));
    expect(placedOn(two, "b")).toEqual(res(1000));
    const back = release(two, [
      { nodeId: "b", resources: res(1000) },
      { nodeId: "a", resources: res(500, GB) },
    ]);
    expect(placedOn(back, "a")).toEqual(res(250, GB));
    expect(back.placed.has("b")).toBe(false);
    expect(placedOn(two, "b")).toEqual(res(1000));
    expect(placedOn(EMPTY_LEDGER, "a")).toEqual(res(0));
  });

  it("never goes below zero on a release of more than was placed", () => {
    const ledger = release(ledgerOf([{ nodeId: "a", resources: res(100) }]), [
      { nodeId: "a", resources: res(300, GB) },
    ]);
    expect(placedOn(ledger, "a")).toEqual(res(0));
  });
});
