import { describe, expect, it } from "vitest";
import { parseDuration } from "../../../src/config/duration.ts";
import { CONFIG_KEYS } from "../../../src/config/keys.ts";
import { loadConfig, loadTracedConfig } from "../../../src/config/load-config.ts";
import { configFile } from "../../support/fixtures.ts";

describe("durations", () => {
  it("parses Go-style durations and refuses the rest", () => {
    expect(parseDuration("15s")).toBe(15_000);
    expect(parseDuration("1m30s")).toBe(90_000);
    expect(parseDuration("500ms")).toBe(500);
    expect(parseDuration("2h")).toBe(7_200_000);
    for (const bad of ["", "15", "1x", "s", "1m 30s", "-1s"]) expect(parseDuration(bad), bad).toBeUndefined();
  });
});

describe("loadConfig", () => {
  const yaml = configFile;

  it("says where each value came from: the source that won, else default", () => {
    const file = yaml("API:\n  Port: 2000\nLogging:\n  Level: debug\nDataDir: /from/file\n");
    const { config, origins } = loadTracedConfig({
      files: [file],
      env: { SHOAL_API_PORT: "3000", SHOAL_LOGGING_MODE: "json", HOME_NOT_A_KEY: "x" },
      settings: ["Logging.Mode=default", "Orchestrator.NodeManager.ManualApproval"],
      flags: { NodeID: "n-flag" },
    });
    expect(config["API.Port"]).toBe(3000);
    expect(origins["API.Port"]).toBe("env SHOAL_API_PORT");
    expect(origins["Logging.Level"]).toBe(`file ${file}`);
    expect(origins.DataDir).toBe(`file ${file}`);
    expect(origins["Logging.Mode"]).toBe("flag -c");
    expect(origins["Orchestrator.NodeManager.ManualApproval"]).toBe("flag -c");
    expect(origins.NodeID).toBe("flag");
    expect(origins["API.Host"]).toBe("default");
    expect(Object.keys(origins).sort()).toEqual(Object.keys(CONFIG_KEYS).sort());
  });

  it("takes whole numbers above 65535 where the key is not a port (RegistrationBurst's default is 100000)", () => {
    const c = loadConfig({ settings: ["Orchestrator.NodeManager.RegistrationBurst=200000"], env: {} });
    expect(c["Orchestrator.NodeManager.RegistrationBurst"]).toBe(200_000);
    expect(() => loadConfig({ settings: ["API.Port=70000"], env: {} })).toThrow(
      "API.Port: expected a whole number from 0 to 65535",
    );
  });

  it("has Bacalhau's defaults", () => {
    const c = loadConfig({ env: {} });
    expect(c["Compute.Heartbeat.Interval"]).toBe(15_000);
    expect(c["Compute.Heartbeat.InfoUpdateInterval"]).toBe(60_000);
    expect(c["Compute.Heartbeat.ResourceUpdateInterval"]).toBe(30_000);
    expect(c["Orchestrator.NodeManager.DisconnectTimeout"]).toBe(60_000);
    expect(c["Orchestrator.NodeManager.UnknownTimeout"]).toBe(300_000);
    expect(c["Orchestrator.NodeManager.ManualApproval"]).toBe(false);
    expect(c["Orchestrator.NodeManager.MaxRegistrationsPerSecond"]).toBe(100);
    expect(c["Orchestrator.NodeManager.RegistrationBurst"]).toBe(100_000);
    expect(c["Orchestrator.NodeManager.MaxPendingNodes"]).toBe(1000);
    expect(c["Orchestrator.Scheduler.MaxExecutionsPerEval"]).toBe(20);
    expect(c["Orchestrator.Scheduler.ExecutionLimitBackoff"]).toBe(100);
    expect(c.DataDir).toMatch(/\.shoal$/);
  });

  it("takes the scheduler's rate limit, and no backoff once the limit is off", () => {
    const c = loadConfig({
      settings: ["Orchestrator.Scheduler.MaxExecutionsPerEval=1", "Orchestrator.Scheduler.ExecutionLimitBackoff=3s"],
      env: {},
    });
    expect([
      c["Orchestrator.Scheduler.MaxExecutionsPerEval"],
      c["Orchestrator.Scheduler.ExecutionLimitBackoff"],
    ]).toEqual([1, 3000]);
    const off = loadConfig({
      settings: ["Orchestrator.Scheduler.MaxExecutionsPerEval=0", "Orchestrator.Scheduler.ExecutionLimitBackoff=0s"],
      env: {},
    });
    expect(off["Orchestrator.Scheduler.MaxExecutionsPerEval"]).toBe(0);
    const longest = loadConfig({ settings: ["Orchestrator.Scheduler.ExecutionLimitBackoff=1h"], env: {} });
    expect(longest["Orchestrator.Scheduler.ExecutionLimitBackoff"]).toBe(3_600_000);
  });

  it("applies flags > -c > environment > YAML files (later files win) > defaults", () => {
    const a = yaml("API:\n  Port: 1000\n  Host: a.example\nOrchestrator:\n  NodeManager:\n    ManualApproval: true\n");
    const b = yaml("API:\n  Port: 2000\nLabels:\n  zone: edge\n");
    const c = loadConfig({
      files: [a, b],
      env: { SHOAL_API_PORT: "3000", SHOAL_COMPUTE_HEARTBEAT_INTERVAL: "5s", SHOAL_TEST_EVENTSTORE_URL: "ignored" },
      settings: ["Compute.Heartbeat.Interval=7s", "orchestrator.nodemanager.disconnecttimeout=2m"],
      flags: { NodeID: "n1" },
    });
    expect(c["API.Host"]).toBe("a.example");
    expect(c["API.Port"]).toBe(3000);
    expect(c["Compute.Heartbeat.Interval"]).toBe(7000);
    expect(c["Orchestrator.NodeManager.DisconnectTimeout"]).toBe(120_000);
    expect(c["Orchestrator.NodeManager.ManualApproval"]).toBe(true);
    expect(c.Labels).toEqual({ zone: "edge" });
    expect(c.NodeID).toBe("n1");
  });

  it("takes a bare -c key as true and -c file.yaml as a file", () => {
    const f = yaml("API:\n  Port: 4321\n");
    const c = loadConfig({ settings: [f, "Orchestrator.NodeManager.ManualApproval"], env: {} });
    expect(c["API.Port"]).toBe(4321);
    expect(c["Orchestrator.NodeManager.ManualApproval"]).toBe(true);
  });

  it("reads health overrides from YAML and JSON", () => {
    const f = yaml(
      "Orchestrator:\n  NodeManager:\n    Overrides:\n      - Selector: zone=edge\n        DisconnectTimeout: 5m\n      - NodeIDs: [n7]\n        UnknownTimeout: 1h\n",
    );
    expect(loadConfig({ files: [f], env: {} })["Orchestrator.NodeManager.Overrides"]).toEqual([
      { Selector: "zone=edge", DisconnectTimeout: 300_000 },
      { NodeIDs: ["n7"], UnknownTimeout: 3_600_000 },
    ]);
    const c = loadConfig({
      settings: ['Orchestrator.NodeManager.Overrides=[{"NodeIDs":["a"],"DisconnectTimeout":"10s"}]'],
      env: {},
    });
    expect(c["Orchestrator.NodeManager.Overrides"]).toEqual([{ NodeIDs: ["a"], DisconnectTimeout: 10_000 }]);
  });

  it("takes labels by Kubernetes' rules, up to the cap with the built-in labels", () => {
    const labels = Array.from({ length: 59 }, (_, i) => `k${i}=v`).join(",");
    expect(Object.keys(loadConfig({ settings: [`Labels=${labels}`], env: {} }).Labels)).toHaveLength(59);
    expect(loadConfig({ settings: ["Labels=example.com/zone=a,empty=,Architecture=arm64"], env: {} }).Labels).toEqual({
      "example.com/zone": "a",
      empty: "",
      Architecture: "arm64",
    });
    expect(
      loadConfig({
        settings: [
          "Orchestrator.NodeManager.MaxRegistrationsPerSecond=0",
          "Orchestrator.NodeManager.RegistrationBurst=0",
        ],
        env: {},
      })["Orchestrator.NodeManager.RegistrationBurst"],
    ).toBe(0);
  });

  it("takes rates and shares as numbers with a fraction", () => {
    const c = loadConfig({
      settings: ["Orchestrator.NodeManager.NodeEvictionRate=0.5", "Orchestrator.NodeManager.UnhealthyNodesThreshold=1"],
      env: { SHOAL_ORCHESTRATOR_NODEMANAGER_SECONDARYNODEEVICTIONRATE: "0" },
    });
    expect([
      c["Orchestrator.NodeManager.NodeEvictionRate"],
      c["Orchestrator.NodeManager.SecondaryNodeEvictionRate"],
      c["Orchestrator.NodeManager.UnhealthyNodesThreshold"],
    ]).toEqual([0.5, 0, 1]);
    expect(loadConfig({ env: {} })["Orchestrator.NodeManager.NodeEvictionRate"]).toBe(0.1);
  });

  it("refuses bad input with a message naming the source and key", () => {
    const cases: [Parameters<typeof loadConfig>[0], RegExp][] = [
      [{ settings: ["No.Such.Key=1"] }, /-c No.Such.Key=…: unknown config key No.Such.Key$/],
      [{ settings: ["API.Port=http"] }, /API.Port: expected a whole number/],
      [{ settings: ["API.Port=70000"] }, /API.Port/],
      [
        { env: { SHOAL_COMPUTE_HEARTBEAT_INTERVAL: "15" } },
        /environment variable SHOAL_COMPUTE_HEARTBEAT_INTERVAL: Compute.Heartbeat.Interval: expected a duration/,
      ],
      [{ settings: ["Orchestrator.NodeManager.ManualApproval=perhaps"] }, /expected true or false/],
      [{ settings: ["Labels=novalue"] }, /expected k=v/],
      [
        { settings: ["Labels=zone=a b"] },
        /-c Labels=zone=a b: Labels: label value "a b" must be empty or letters, digits/,
      ],
      [
        { settings: ["Labels=Example.com/zone=a"] },
        /Labels: label key "Example.com\/zone": the prefix must be a DNS subdomain/,
      ],
      [
        { files: [yaml(`Labels:\n  ${"k".repeat(64)}: x\n`)] },
        /Labels: label key "k+": the name after any prefix is longer than 63 characters/,
      ],
      [
        { settings: [`Labels=${Array.from({ length: 60 }, (_, i) => `k${i}=v`).join(",")}`] },
        /65 labels with name, os_type, os_arch, Operating-System, Architecture, which Shoal adds/,
      ],
      [
        {
          settings: [
            "Orchestrator.NodeManager.MaxRegistrationsPerSecond=5",
            "Orchestrator.NodeManager.RegistrationBurst=0",
          ],
        },
        /RegistrationBurst must be at least 1/,
      ],
      [
        { settings: ['Orchestrator.NodeManager.Overrides=[{"Selector":"a in (","DisconnectTimeout":"1s"}]'] },
        /unbalanced/,
      ],
      [
        { settings: ['Orchestrator.NodeManager.Overrides=[{"DisconnectTimeout":"1s"}]'] },
        /exactly one of NodeIDs or Selector/,
      ],
      [{ settings: ["Orchestrator.NodeManager.DisconnectTimeout=10m"] }, /UnknownTimeout must not be shorter/],
      [
        { settings: ["Orchestrator.NodeManager.NodeEvictionRate=fast"] },
        /NodeEvictionRate: expected a number of at least 0 \(such as 0.1\), got "fast"/,
      ],
      [
        { settings: ["Orchestrator.NodeManager.NodeEvictionRate=-1"] },
        /NodeEvictionRate: expected a number of at least 0/,
      ],
      [
        { settings: ["Orchestrator.NodeManager.UnhealthyNodesThreshold=0"] },
        /UnhealthyNodesThreshold is a share of the fleet: more than 0, at most 1/,
      ],
      [{ settings: ["Orchestrator.Scheduler.ExecutionAnswerTimeout=0s"] }, /ExecutionAnswerTimeout must be at least/],
      [{ settings: ["Orchestrator.Scheduler.ExecutionAnswerTimeout=500ms"] }, /must be at least 1s: a node needs time/],
      [
        { settings: ["Orchestrator.Scheduler.ExecutionLimitBackoff=0s"] },
        /ExecutionLimitBackoff must be more than 0 while MaxExecutionsPerEval is set \(0 turns the limit off\)/,
      ],
      [
        { settings: ["Orchestrator.Scheduler.MaxExecutionsPerEval=-1"] },
        /MaxExecutionsPerEval: expected a whole number from 0 to/,
      ],
      [{ settings: ["Orchestrator.Scheduler.ExecutionLimitBackoff=soon"] }, /ExecutionLimitBackoff/],
      [
        { settings: ["Orchestrator.Scheduler.ExecutionLimitBackoff=1000000h"] },
        /ExecutionLimitBackoff must be at most 1h: an update's rollout waits that long/,
      ],
      [{ settings: ["Orchestrator.NodeManager.UnhealthyNodesThreshold=1.5"] }, /UnhealthyNodesThreshold is a share/],
      [{ settings: ["API.EventStream.MaxCatchUps=0"] }, /MaxCatchUps must be at least 1/],
      [{ files: ["/nonexistent/shoal.yaml"] }, /does not exist/],
      [{ files: [yaml("API: [unclosed")] }, /not valid YAML/],
      [{ files: [yaml("API:\n  Colour: red\n")] }, /unknown config key API.Colour/],
    ];
    for (const [sources, message] of cases)
      expect(() => loadConfig({ env: {}, ...sources }), String(message)).toThrow(message);
  });

  it("never echoes the value of an unknown key or of a secret key", () => {
    const refusal = (sources: Parameters<typeof loadConfig>[0]): string => {
      try {
        loadConfig({ env: {}, ...sources });
      } catch (e) {
        return (e as Error).message;
      }
      throw new Error("accepted");
    };
    // A misspelt secret key: named, its value not shown.
    expect(refusal({ settings: ["Orchestrator.NATS.Pasword=s3cret"] })).toBe(
      "-c Orchestrator.NATS.Pasword=…: unknown config key Orchestrator.NATS.Pasword",
    );
    // ':' for '=' makes the whole entry the "name": not echoed either.
    expect(refusal({ settings: ["Orchestrator.NATS.Password:s3cret"] })).not.toContain("s3cret");
    expect(refusal({ settings: ["Compute.Auth.Tokn"] })).toBe(
      "-c Compute.Auth.Tokn: unknown config key Compute.Auth.Tokn",
    );
    // A secret key given a value of the wrong type (YAML) names the type, not the value.
    for (const key of [
      "Orchestrator.NATS.Password",
      "Orchestrator.NATS.Token",
      "Orchestrator.Auth.Token",
      "Compute.Auth.Token",
    ]) {
      const [section, ...rest] = key.split(".");
      const nested = rest.reduceRight<unknown>((inner, k) => ({ [k]: inner }), { hidden: "s3cret" });
      const message = refusal({ files: [yaml(JSON.stringify({ [section!]: nested }))] });
      expect(message, key).toMatch(new RegExp(`${key.replaceAll(".", "\\.")}: expected a string, got object$`));
      expect(message, key).not.toContain("s3cret");
    }
    // A non-secret key still shows what was wrong with it.
    expect(refusal({ files: [yaml('API:\n  Host: {x: "visible"}\n')] })).toContain('got {"x":"visible"}');
  });

  it("marks every key that holds a password, token or API key as secret, and nothing else", () => {
    const secret = Object.entries(CONFIG_KEYS)
      .filter(([, def]) => "secret" in def && def.secret === true)
      .map(([k]) => k);
    expect(secret.sort()).toEqual([
      "API.Auth.Users",
      "Compute.Auth.Token",
      "Compute.Metrics.BearerToken",
      "Orchestrator.Auth.Token",
      "Orchestrator.NATS.Password",
      "Orchestrator.NATS.Token",
    ]);
  });
});
