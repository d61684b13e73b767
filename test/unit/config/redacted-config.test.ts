import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { agentRoutes } from "../../../src/api/agent/agent-routes.ts";
import { nestedConfig } from "../../../src/api/agent/nested-config.ts";
import { CONFIG_KEYS, configValueText, defaultConfig, type ConfigKey } from "../../../src/config/keys.ts";
import { loadConfig } from "../../../src/config/load-config.ts";
import { REDACTED, redactedConfig } from "../../../src/config/redacted-config.ts";
import type { NodeInfo } from "../../../src/events/catalog/node-info.ts";
import { tempDir } from "../../support/fixtures.ts";

const SECRET_KEYS = (Object.keys(CONFIG_KEYS) as ConfigKey[]).filter((k) => CONFIG_KEYS[k].secret === true);

describe("redactedConfig", () => {
  it("hides every secret key that is set, and shows which are not", () => {
    expect(SECRET_KEYS).toEqual(
      expect.arrayContaining([
        "Orchestrator.Auth.Token",
        "Compute.Auth.Token",
        "Orchestrator.NATS.Password",
        "Compute.Metrics.BearerToken",
      ]),
    );
    const config = defaultConfig();
    for (const key of SECRET_KEYS) if (CONFIG_KEYS[key].kind === "string") (config as any)[key] = `secret-of-${key}`;
    const shown = redactedConfig(config);
    for (const key of SECRET_KEYS) if (CONFIG_KEYS[key].kind === "string") expect(shown[key], key).toBe(REDACTED);
    expect(JSON.stringify(shown)).not.toContain("secret-of-");
    expect(redactedConfig(defaultConfig())["Orchestrator.Auth.Token"]).toBe("");
  });

  it("keeps API.Auth.Users' names and capabilities, not their passwords and keys", () => {
    const config = defaultConfig();
    config["API.Auth.Users"] = [
      { Username: "ops", Password: "hunter2hunter2", Capabilities: [{ Actions: ["read:node"] }] },
      { Alias: "ci", APIKey: "0123456789abcdefghijkl", Capabilities: [{ Actions: ["*"] }] },
    ];
    expect(redactedConfig(config)["API.Auth.Users"]).toEqual([
      { Username: "ops", Password: REDACTED, Capabilities: [{ Actions: ["read:node"] }] },
      { Alias: "ci", APIKey: REDACTED, Capabilities: [{ Actions: ["*"] }] },
    ]);
  });

  it("hides credentials written into URLs: passwords, NATS tokens, in lists and connection strings", () => {
    const config = defaultConfig();
    config["EventStore.URL"] = "kurrentdb://admin:chan@ge,it@a:2113,b:2113?tls=true";
    config["Orchestrator.NATS.URL"] = "nats://shoal:pw1@n1:4222,nats://tok3n@n2:4222,nats://n3:4222";
    config["Compute.Orchestrators"] = ["tls://node:pw2@o1:4222", "nats://o2:4222"];
    const shown = redactedConfig(config);
    expect(shown["EventStore.URL"]).toBe(`kurrentdb://admin:${REDACTED}@a:2113,b:2113?tls=true`);
    expect(shown["Orchestrator.NATS.URL"]).toBe(
      `nats://shoal:${REDACTED}@n1:4222,nats://${REDACTED}@n2:4222,nats://n3:4222`,
    );
    expect(shown["Compute.Orchestrators"]).toEqual([`tls://node:${REDACTED}@o1:4222`, "nats://o2:4222"]);
    // What holds no credentials is shown as it is.
    expect(shown["API.Host"]).toBe(config["API.Host"]);
    expect(shown["Orchestrator.NodeManager.DisconnectTimeout"]).toBe(60_000);
  });
});

describe("nestedConfig", () => {
  it("nests every key by its sections, Bacalhau's shape, losing none", () => {
    const flat = redactedConfig(defaultConfig());
    const nested = nestedConfig(flat) as any;
    expect(nested.API.Auth.AnonymousAccess).toBe("read");
    expect(nested.Orchestrator.NodeManager.Overrides).toEqual([]);
    for (const key of Object.keys(flat))
      expect(
        key.split(".").reduce((node, part) => node?.[part], nested),
        key,
      ).toEqual(flat[key as ConfigKey]);
  });
});

describe("GET /api/v1/agent/config's answer", () => {
  it("saved as YAML, is a config file that loads to the same configuration", async () => {
    const config = defaultConfig();
    Object.assign(config, {
      DataDir: "/var/lib/shoal",
      Labels: { zone: "a", rack: "r7" },
      "API.Port": 8443,
      "Orchestrator.NodeManager.DisconnectTimeout": 90_000,
      "Orchestrator.NodeManager.Overrides": [{ Selector: "zone=a", DisconnectTimeout: 120_000 }],
      "Orchestrator.NATS.JetStreamMaxStore": 2 * 1024 ** 3,
      "Compute.Orchestrators": ["nats://o1:4222", "nats://o2:4222"],
      "Compute.Docker.MaxOutputBytes": 1536 * 1024,
    });
    const route = agentRoutes({} as NodeInfo, [], config).find((r) => r.operationId === "agentConfig")!;
    const answer = await route.handler({} as never, {} as never, {} as never);
    expect(answer).toMatchObject({
      Orchestrator: { NodeManager: { DisconnectTimeout: "90s" }, NATS: { JetStreamMaxStore: "2GiB" } },
    });
    const file = join(tempDir(), "agent-config.yaml");
    writeFileSync(file, stringify(answer));
    expect(loadConfig({ files: [file], env: {} })).toEqual(config);
    // `shoal config list` writes each value as -c takes it.
    const settings = (Object.keys(CONFIG_KEYS) as ConfigKey[]).map(
      (key) => `${key}=${configValueText(key, config[key])}`,
    );
    expect(loadConfig({ settings, env: {} })).toEqual(config);
  });
});
