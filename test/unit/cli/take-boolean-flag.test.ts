import { describe, expect, it } from "vitest";
import { takeBooleanFlag } from "../../../src/cli/take-boolean-flag.ts";
import { UsageError } from "../../../src/cli/usage-error.ts";

const take = (...args: string[]) => takeBooleanFlag(args, "wait", "shoal job run --help");

describe("takeBooleanFlag (--wait, --wait=false, --wait false)", () => {
  it("reads each spelling and leaves the other arguments as they were", () => {
    expect(take("job.yaml")).toEqual({ args: ["job.yaml"], value: undefined });
    expect(take("--wait", "job.yaml")).toEqual({ args: ["job.yaml"], value: true });
    expect(take("--wait=false", "job.yaml")).toEqual({ args: ["job.yaml"], value: false });
    expect(take("--wait=true", "job.yaml")).toEqual({ args: ["job.yaml"], value: true });
    expect(take("--wait", "false", "job.yaml")).toEqual({ args: ["job.yaml"], value: false });
    expect(take("job.yaml", "--wait", "true")).toEqual({ args: ["job.yaml"], value: true });
    // The last one given wins, as pflag has it.
    expect(take("--wait=false", "--wait")).toEqual({ args: [], value: true });
  });

  it("leaves everything after -- alone: a container's own --wait is its command's", () => {
    expect(take("busybox", "--", "prog", "--wait=false", "--wait")).toEqual({
      args: ["busybox", "--", "prog", "--wait=false", "--wait"],
      value: undefined,
    });
  });

  it("refuses any other value as a usage error pointing at the help", () => {
    expect(() => take("--wait=maybe")).toThrow(
      new UsageError('--wait takes true or false, got "maybe"', "shoal job run --help"),
    );
    expect(() => take("--wait=")).toThrow(UsageError);
    // A word after --wait that is not true or false is not its value: a positional, as before.
    expect(take("--wait", "job.yaml")).toEqual({ args: ["job.yaml"], value: true });
  });
});
