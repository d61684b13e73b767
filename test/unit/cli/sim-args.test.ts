import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseSimArgs, simJoinToken, type SimSettings } from "../../../src/cli/commands/sim-command.ts";
import { UsageError } from "../../../src/cli/usage-error.ts";
import { defaultConfig } from "../../../src/config/keys.ts";
import { openFileLimit } from "../../../src/sim/open-file-limit.ts";
import { tempDir } from "../../support/fixtures.ts";

function settings(args: string[]): SimSettings {
  const parsed = parseSimArgs(args);
  if (parsed.help) throw new Error("help");
  return parsed.settings;
}

const usageError = (args: string[]) => {
  try {
    parseSimArgs(args);
  } catch (e) {
    expect(e).toBeInstanceOf(UsageError);
    return (e as Error).message;
  }
  throw new Error(`no usage error for ${args.join(" ")}`);
};

describe("shoal sim's arguments", () => {
  it("default to 5s heartbeats, 1s jitter, 1000 joins/s and a random id prefix", () => {
    const s = settings(["--nodes", "100"]);
    expect(s).toMatchObject({ nodes: 100, heartbeatMs: 5000, jitterMs: 1000, joinRatePerSecond: 1000 });
    expect(s.idPrefix).toMatch(/^sim-[0-9a-f]{4}$/);
    expect(s).not.toHaveProperty("killFraction");
    expect(s).not.toHaveProperty("durationMs");
    expect(s).not.toHaveProperty("runWork");
  });

  it("take work with --run-work: 1s runs unless --run-time says", () => {
    expect(settings(["--nodes", "3", "--run-work"]).runWork).toEqual({ runMs: 1000 });
    expect(settings(["--nodes", "3", "--run-work", "--run-time", "250ms"]).runWork).toEqual({ runMs: 250 });
    expect(settings(["--nodes", "3", "--run-work", "--run-time", "0s"]).runWork).toEqual({ runMs: 0 });
    expect(usageError(["--nodes", "3", "--run-time", "2s"])).toBe("--run-time needs --run-work");
    expect(usageError(["--nodes", "3", "--run-work", "--run-time", "soon"])).toMatch(
      /--run-time: "soon" is not a duration/,
    );
  });

  it("read every option", () => {
    const s = settings([
      ...[
        "--nodes",
        "20000",
        "--orchestrator",
        "nats://10.0.0.5:4222",
        "--token-file",
        "/tmp/t",
        "--heartbeat-interval",
        "2s",
        "--jitter",
        "500ms",
      ],
      ...[
        "--join-rate",
        "250/s",
        "--kill",
        "0.01",
        "--kill-at",
        "1m",
        "--revive-after",
        "30s",
        "--duration",
        "5m",
        "--id-prefix",
        "rack-7",
      ],
    ]);
    expect(s).toEqual({
      nodes: 20000,
      orchestrator: "nats://10.0.0.5:4222",
      tokenFile: "/tmp/t",
      heartbeatMs: 2000,
      jitterMs: 500,
      joinRatePerSecond: 250,
      killFraction: 0.01,
      killAtMs: 60_000,
      reviveAfterMs: 30_000,
      durationMs: 300_000,
      idPrefix: "rack-7",
    });
    expect(settings(["--nodes", "1", "--join-rate", "50"]).joinRatePerSecond).toBe(50);
    expect(settings(["--nodes", "1", "--kill", "1"])).toMatchObject({ killFraction: 1, killAtMs: 60_000 });
    expect(settings(["--nodes", "1", "--heartbeat-interval", "1s"]).jitterMs).toBe(500);
  });

  it("refuse bad arguments with a message that names the flag", () => {
    expect(usageError([])).toMatch(/--nodes is required/);
    for (const n of ["0", "-5", "ten", "1.5", ""])
      expect(usageError([`--nodes=${n}`])).toMatch(/--nodes: .* is not a positive whole number/);
    expect(usageError(["--nodes", "5", "--heartbeat-interval", "5"])).toMatch(
      /--heartbeat-interval: "5" is not a duration/,
    );
    expect(usageError(["--nodes", "5", "--heartbeat-interval", "5ms"])).toMatch(/at least 10ms/);
    expect(usageError(["--nodes", "5", "--heartbeat-interval", "2s", "--jitter", "1.5s"])).toMatch(
      /--jitter must be at most half/,
    );
    for (const r of ["fast", "0", "-3/s", "10/m"])
      expect(usageError(["--nodes", "5", `--join-rate=${r}`])).toMatch(/--join-rate: .* is not a rate/);
    for (const k of ["0", "1.5", "-0.1", "x", ""])
      expect(usageError(["--nodes", "5", `--kill=${k}`])).toMatch(/--kill: .* is not a share of the nodes/);
    expect(usageError(["--nodes", "5", "--kill-at", "10s"])).toBe("--kill-at needs --kill");
    expect(usageError(["--nodes", "5", "--revive-after", "10s"])).toBe("--revive-after needs --kill");
    expect(usageError(["--nodes", "5", "--duration", "0s"])).toMatch(/--duration must be longer than 0s/);
    expect(usageError(["--nodes", "5", "--id-prefix", "a.b"])).toMatch(/--id-prefix: "a.b" may hold only/);
    expect(usageError(["--nodes", "5", "--orchestrator", "localhost:4222"])).toMatch(
      /--orchestrator: .* is not a NATS URL/,
    );
    expect(() => parseSimArgs(["--nodes", "5", "--bogus"])).toThrow(/Unknown option '--bogus'/);
  });

  it("take the join token from --token-file, else SHOAL_JOIN_TOKEN, else Compute.Auth.Token; none is an error", () => {
    const dir = tempDir();
    mkdirSync(join(dir, "credentials"));
    const file = join(dir, "credentials", "join-token");
    writeFileSync(file, "from-file\n");
    const config = { ...defaultConfig(), "Compute.Auth.Token": "from-config" };
    expect(
      simJoinToken(settings(["--nodes", "1", "--token-file", file]), config, { SHOAL_JOIN_TOKEN: "from-env" }),
    ).toBe("from-file");
    expect(simJoinToken(settings(["--nodes", "1"]), config, { SHOAL_JOIN_TOKEN: "from-env" })).toBe("from-env");
    expect(simJoinToken(settings(["--nodes", "1"]), config, {})).toBe("from-config");
    expect(() => simJoinToken(settings(["--nodes", "1"]), defaultConfig(), {})).toThrow(
      /no join token: give --token-file FILE, or set SHOAL_JOIN_TOKEN/,
    );
    expect(() => simJoinToken(settings(["--nodes", "1", "--token-file", join(dir, "missing")]), config, {})).toThrow(
      /--token-file: cannot read .*missing: ENOENT/,
    );
    writeFileSync(file, "\n");
    expect(() => simJoinToken(settings(["--nodes", "1", "--token-file", file]), config, {})).toThrow(
      /--token-file: .* is empty/,
    );
  });

  it("read the open-file limit that bounds how many nodes one sim can run", () => {
    const limits =
      "Limit                     Soft Limit           Hard Limit           Units\nMax open files            20000                40000                files\n";
    expect(openFileLimit(limits)).toBe(20000);
    expect(openFileLimit(limits.replace("20000 ", "unlimited "))).toBeUndefined();
    expect(openFileLimit()).toBeGreaterThan(0);
  });
});
