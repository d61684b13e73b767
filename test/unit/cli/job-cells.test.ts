import { describe, expect, it } from "vitest";
import { computeStateName, desiredStateName, elapsed, historyEventText, shortId } from "../../../src/cli/job-cells.ts";
import { formatSeconds, secondsFlag, wholeNumberFlag } from "../../../src/cli/number-flag.ts";
import { UsageError } from "../../../src/cli/usage-error.ts";

describe("job table cells, as Bacalhau's CLI prints them", () => {
  it("shortId: Bacalhau's idgen.ShortUUID", () => {
    expect(shortId("j-7a4c7576-5fbf-461b-b644-952b571ec500")).toBe("j-7a4c7576");
    expect(shortId("e-e8b890b4-75c0-5d13-9c78-52fc3e7fb91d")).toBe("e-e8b890b4");
    expect(shortId("7a4c7576-5fbf-461b-b644-952b571ec500")).toBe("7a4c7576");
    expect(shortId("n-617ba839-9c21-4c7d-9cc2-b8359f8e4d5c")).toBe("n-617ba839");
    // Not a uuid: as it is.
    expect(shortId("edge-1")).toBe("edge-1");
    expect(shortId("j-7a4c7576")).toBe("j-7a4c7576");
  });

  it("elapsed: Bacalhau's output.Elapsed", () => {
    const now = new Date("2026-11-23T12:00:00Z");
    const ago = (s: number) => elapsed(new Date(now.getTime() - s * 1000), now);
    expect([ago(0), ago(10), ago(60), ago(310), ago(3600), ago(3660), ago(86_400), ago(90_000)]).toEqual([
      "0s",
      "10s",
      "1m",
      "5m10s",
      "1h",
      "1h1m",
      "1d",
      "1d1h",
    ]);
    // A clock a little behind the server's: never negative.
    expect(ago(-5)).toBe("0s");
  });

  it("execution states by Bacalhau's integers", () => {
    expect([1, 5, 6, 9, 10, 11].map(computeStateName)).toEqual([
      "New",
      "BidAccepted",
      "Running",
      "Completed",
      "Failed",
      "Cancelled",
    ]);
    expect([0, 1, 2].map(desiredStateName)).toEqual(["Pending", "Running", "Stopped"]);
    expect(computeStateName(42)).toBe("Unknown(42)");
  });

  it("history event text: errors marked, the hint after", () => {
    expect(historyEventText({ Message: "Running", Details: {} })).toBe("Running");
    expect(historyEventText({ Message: "boom", Details: { IsError: "true", Hint: "try a bigger node" } })).toBe(
      "Error: boom Hint: try a bigger node",
    );
  });
});

describe("number flags", () => {
  it("seconds or a duration; anything else a usage error naming the flag", () => {
    expect(["300", "90s", "5m", "1h30m", "1h0m5s"].map((t) => secondsFlag(t, "--timeout"))).toEqual([
      300, 90, 300, 5400, 3605,
    ]);
    for (const bad of ["soon", "-1", "1.5", "5d", "", "m"])
      expect(() => secondsFlag(bad, "--timeout"), bad).toThrow(UsageError);
    expect(() => secondsFlag("soon", "--timeout", "shoal docker run --help")).toThrow(
      /--timeout must be whole seconds/,
    );
  });

  it("whole numbers within bounds", () => {
    expect(wholeNumberFlag("10", "--limit", 1, 100)).toBe(10);
    for (const bad of ["0", "101", "ten", "1e2", "-1", "2.5"])
      expect(() => wholeNumberFlag(bad, "--limit", 1, 100), bad).toThrow(
        /--limit must be a whole number from 1 to 100/,
      );
  });

  it("formatSeconds prints as Go prints a duration", () => {
    expect([45, 600, 3600, 5405].map(formatSeconds)).toEqual(["45s", "10m0s", "1h0m0s", "1h30m5s"]);
  });
});
