import { describe, expect, it } from "vitest";
import { allocatedCapacity } from "../../src/compute/allocated-capacity.ts";
import { ConfigError } from "../../src/config/config-error.ts";

const machine = { cpuMillis: 4000, memoryBytes: 8 * 1024 ** 3 };

describe("Compute.AllocatedCapacity", () => {
  it("reads shares of the machine, cores, millicores and go-humanize sizes", () => {
    expect(allocatedCapacity("70%", "50%", machine)).toEqual({ cpuMillis: 2800, memoryBytes: 4 * 1024 ** 3 });
    expect(allocatedCapacity("2", "2Gi", machine)).toEqual({ cpuMillis: 2000, memoryBytes: 2 * 1024 ** 3 });
    expect(allocatedCapacity("1500m", "4Gb", machine)).toEqual({ cpuMillis: 1500, memoryBytes: 4e9 });
    expect(allocatedCapacity("0.5", "512Mb", machine)).toEqual({ cpuMillis: 500, memoryBytes: 512e6 });
  });

  it("refuses what is not a capacity, naming the key", () => {
    expect(() => allocatedCapacity("lots", "1Gi", machine)).toThrow(
      new ConfigError(
        'Compute.AllocatedCapacity.CPU: invalid value "lots" (a share of this machine such as 70%, or cores or millicores such as 2 or 1500m)',
      ),
    );
    expect(() => allocatedCapacity("1", "0", machine)).toThrow(
      /^Compute\.AllocatedCapacity\.Memory: invalid value "0"/,
    );
    expect(() => allocatedCapacity("150%", "1Gi", machine)).toThrow(/^Compute\.AllocatedCapacity\.CPU/);
    expect(() => allocatedCapacity("0%", "1Gi", machine)).toThrow(/^Compute\.AllocatedCapacity\.CPU/);
  });
});
