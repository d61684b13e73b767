import { describe, expect, it } from "vitest";
import { parseBytes, parseCpu, parseGpu, parseTaskResources } from "../../../../machines/job/task-resources.ts";

describe("resource strings as Bacalhau reads them", () => {
  it("reads CPU as cores or millicores (k8sresource)", () => {
    expect(parseCpu("500m")).toBe(0.5);
    expect(parseCpu("0.5")).toBe(0.5);
    expect(parseCpu("2")).toBe(2);
    expect(parseCpu("1.2345")).toBe(1.234);
    expect(parseCpu(" 250M ")).toBe(0.25);
    for (const bad of ["", "m", "-1", "1.5m", "lots", "1e", "NaN"]) expect(parseCpu(bad), bad).toBeUndefined();
  });

  it("reads memory and disk as go-humanize does: decimal and binary units, case-insensitive", () => {
    expect(parseBytes("512Mb")).toBe(512_000_000);
    expect(parseBytes("1Gb")).toBe(1_000_000_000);
    expect(parseBytes("1Gi")).toBe(1024 ** 3);
    expect(parseBytes("1GiB")).toBe(1024 ** 3);
    expect(parseBytes("256mi")).toBe(256 * 1024 ** 2);
    expect(parseBytes("1.5 kb")).toBe(1500);
    expect(parseBytes("1,000")).toBe(1000);
    expect(parseBytes("10")).toBe(10);
    for (const bad of ["", "Gb", "-1Gb", "1 parsec", "1e3", "1.2.3kb", "99999999eb"])
      expect(parseBytes(bad), bad).toBeUndefined();
  });

  it("reads GPUs as a whole number", () => {
    expect(parseGpu("2")).toBe(2);
    for (const bad of ["", "1.5", "-1", "one"]) expect(parseGpu(bad), bad).toBeUndefined();
  });

  it("turns a stored spec's resources into numbers, 0 where nothing was asked", () => {
    expect(parseTaskResources({ CPU: "500m", Memory: "512mb" })).toEqual({
      CPU: 0.5,
      Memory: 512_000_000,
      Disk: 0,
      GPU: 0,
    });
    expect(parseTaskResources({ CPU: "2", Memory: "1gi", Disk: "10gb", GPU: "1" })).toEqual({
      CPU: 2,
      Memory: 1024 ** 3,
      Disk: 10_000_000_000,
      GPU: 1,
    });
  });
});

describe("configured job defaults", () => {
  it("are checked as a whole, so that a bad default is refused at start and never blamed on a job", async () => {
    const { BACALHAU_JOB_DEFAULTS, jobDefaultsProblems } = await import("../../../../machines/job/job-defaults.ts");
    expect(jobDefaultsProblems(BACALHAU_JOB_DEFAULTS)).toEqual([]);
    expect(
      jobDefaultsProblems({
        ...BACALHAU_JOB_DEFAULTS,
        Ops: {
          Priority: 1.5,
          Task: {
            Resources: { CPU: "lots", Memory: "1Gb" },
            Timeouts: { ExecutionTimeout: -1, TotalTimeout: 60, QueueTimeout: 120 },
          },
        },
      }),
    ).toEqual([
      "JobDefaults.Ops.Priority: must be a whole number",
      'JobDefaults.Ops.Task.Resources.CPU: "lots" is not cores such as 0.5 or 2, or millicores such as 500m',
      "JobDefaults.Ops.Task.Timeouts.ExecutionTimeout: must be a whole number of seconds, at least 0",
      "JobDefaults.Ops.Task.Timeouts: ExecutionTimeout and QueueTimeout together exceed TotalTimeout",
    ]);
  });
});
