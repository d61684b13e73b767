import { describe, expect, it } from "vitest";
import { dockerJob, OPTIONS } from "../../../src/cli/commands/docker-run-command.ts";
import { parseCommandArgs } from "../../../src/cli/parse-command-args.ts";

const jobOf = (...args: string[]) => {
  const { values, positionals } = parseCommandArgs(args, OPTIONS, "shoal docker run --help");
  return dockerJob(values, positionals) as { Tasks: Record<string, unknown>[] };
};

describe("shoal docker run's result flags (Bacalhau's -o NAME:PATH and -p)", () => {
  it("given -p local and -o twice, builds the task's Publisher and ResultPaths as bacalhau docker run does", () => {
    const job = jobOf("-p", "local", "-o", "outputs:/outputs", "--output", "logs:/var/log/app", "busybox");
    expect(job.Tasks[0]).toMatchObject({
      Publisher: { Type: "local" },
      ResultPaths: [
        { Name: "outputs", Path: "/outputs" },
        { Name: "logs", Path: "/var/log/app" },
      ],
    });
    expect(jobOf("--publisher", "target=local", "busybox").Tasks[0]!.Publisher).toEqual({ Type: "local" });
    expect(jobOf("busybox").Tasks[0]).not.toHaveProperty("Publisher");
  });

  it("refuses a result path that is not NAME:PATH, -o without -p, and a publisher this build lacks", () => {
    expect(() => jobOf("-p", "local", "-o", "/outputs", "busybox")).toThrow(
      '--output takes NAME:PATH (outputs:/outputs), got "/outputs"',
    );
    expect(() => jobOf("-p", "local", "-o", "a:/b:/c", "busybox")).toThrow("--output takes NAME:PATH");
    expect(() => jobOf("-o", "outputs:/outputs", "busybox")).toThrow("--output needs --publisher (-p local)");
    expect(() => jobOf("-p", "s3://bucket/key", "busybox")).toThrow(
      '--publisher: publisher type "s3" is not supported: this build has local',
    );
    expect(() => jobOf("-p", "ipfs", "busybox")).toThrow('publisher type "ipfs" is not supported');
  });
});
