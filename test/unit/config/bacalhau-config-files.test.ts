import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bacalhauConfigKey } from "../../../src/config/bacalhau-config-keys.ts";
import { loadConfig, loadTracedConfig } from "../../../src/config/load-config.ts";
import { jobDefaultsOf } from "../../../src/orchestrator/job-defaults-config.ts";
import { configFile } from "../../support/fixtures.ts";

/**
 * Config files written for Bacalhau 1.7 and 1.9 (test/fixtures/bacalhau/config/, each naming its source) read by
 * Shoal's loader: the keys Shoal shares take effect, Bacalhau's others are named in a warning and ignored.
 */
const FIXTURES = join(import.meta.dirname, "../../fixtures/bacalhau/config");
const load = (file: string) => {
  const path = join(FIXTURES, file);
  const traced = loadTracedConfig({ env: {}, files: [path] });
  const prefix = `${path}: Bacalhau's `;
  for (const w of traced.warnings) expect(w.startsWith(prefix), w).toBe(true);
  const ignored = traced.warnings.map((w) => w.slice(prefix.length).replace(/ is not a Shoal setting; ignored$/, ""));
  return { config: traced.config, ignored };
};
const TOKEN = "i_am_very_secret_token";

describe("Bacalhau's integration-test configs", () => {
  it("an orchestrator with basic-auth users: its users, port and join token, its node naming ignored", () => {
    const { config, ignored } = load("orchestrator-basic-auth.yaml");
    expect(config["API.Port"]).toBe(1234);
    expect(config["Orchestrator.Auth.Token"]).toBe(TOKEN);
    expect(config["API.Auth.Users"].map((u) => u.Alias ?? u.APIKey)).toEqual([
      "snoopy",
      "readonlyuser",
      "snoopy-api-key",
      "QWERTYHFGCBNSKFIREHFURHUFE7KEEFBN",
    ]);
    expect(ignored).toEqual(["NameProvider", "Orchestrator.Enabled"]);
  });

  it.each([
    ["orchestrator-license.yaml", ["NameProvider", "Orchestrator.Enabled", "Orchestrator.License.LocalPath"]],
    [
      "orchestrator-tls.yaml",
      [
        "NameProvider",
        "Orchestrator.Enabled",
        "Orchestrator.TLS.ServerCert",
        "Orchestrator.TLS.ServerKey",
        "Orchestrator.TLS.ServerTimeout",
      ],
    ],
  ])("%s: its labels and join token", (file, warned) => {
    const { config, ignored } = load(file);
    expect(config.Labels).toEqual({ label1: "label1Value", label2: "label2Value" });
    expect(config["Orchestrator.Auth.Token"]).toBe(TOKEN);
    expect(ignored).toEqual(warned);
  });

  it.each([
    ["orchestrator-reverse-proxy.yaml", ["Orchestrator.SupportReverseProxy"]],
    ["orchestrator-sso.yaml", ["API.Auth.Oauth2.ProviderID", "API.Auth.Oauth2.JWKSUri", "API.Auth.Oauth2.Scopes"]],
  ])("%s: the port and join token; what Shoal lacks named", (file, warned) => {
    const { config, ignored } = load(file);
    expect(config["API.Port"]).toBe(1234);
    expect(config["Orchestrator.Auth.Token"]).toBe(TOKEN);
    expect(ignored).toEqual(expect.arrayContaining(["NameProvider", "Orchestrator.Enabled", ...warned]));
  });

  it("an orchestrator with a managed publisher: its log level; each publisher key named, never its value", () => {
    const path = join(FIXTURES, "orchestrator-managed-publisher.yaml");
    const { config, warnings } = loadTracedConfig({ env: {}, files: [path] });
    expect(config["Logging.Level"]).toBe("debug");
    expect(warnings).toContain(`${path}: Bacalhau's Publishers.Types.S3Managed.Bucket is not a Shoal setting; ignored`);
    expect(warnings.join("\n")).not.toContain("bacalhau-managed-publisher");
  });

  it.each([
    ["compute-basic-auth.yaml", "nats://bacalhau-orchestrator-node:4222", []],
    ["compute-require-tls.yaml", "nats://bacalhau-traefik-node:4222", ["Compute.TLS.RequireTLS"]],
    ["compute-debug-logs.yaml", "nats://bacalhau-orchestrator-node:4222", []],
  ])("compute node %s: its orchestrators and token", (file, orchestrator, warned) => {
    const { config, ignored } = load(file);
    expect(config["Compute.Orchestrators"]).toEqual([orchestrator]);
    expect(config["Compute.Auth.Token"]).toBe(TOKEN);
    expect(ignored).toEqual(["NameProvider", "Compute.Enabled", ...warned]);
  });

  it("a compute node with a custom CA: the CA Shoal's node trusts", () => {
    const { config } = load("compute-custom-ca.yaml");
    expect(config["Compute.TLS.CACert"]).toBe(
      "/bacalhau_integration_tests/common_assets/certificates/nats_custom/nats_root_ca.crt",
    );
  });
});

describe("configs as `bacalhau config set` writes them (keys in lower case, Go's durations)", () => {
  it("an orchestrator's: DataDir, labels, API, node manager, scheduler, job defaults and logging take effect", () => {
    const { config, ignored } = load("config-set-orchestrator.yaml");
    expect(config).toMatchObject({
      DataDir: "/var/lib/bacalhau",
      Labels: { env: "prod", region: "eu-west-1" },
      "API.Host": "0.0.0.0",
      "API.Port": 1234,
      "Orchestrator.Host": "0.0.0.0",
      "Orchestrator.Port": 4222,
      "Orchestrator.Auth.Token": TOKEN,
      "Orchestrator.NodeManager.DisconnectTimeout": 30_000,
      "Orchestrator.NodeManager.ManualApproval": true,
      "Orchestrator.Scheduler.QueueBackoff": 60_000,
      "JobDefaults.Batch.Priority": 10,
      "JobDefaults.Service.Task.Resources.Memory": "1Gb",
      "Logging.Level": "debug",
      "Logging.Mode": "json",
    });
    expect(jobDefaultsOf(config).Batch).toEqual({
      Priority: 10,
      Task: { Resources: { CPU: "1", Memory: "2GB" }, Timeouts: { ExecutionTimeout: 1800, TotalTimeout: 3600 } },
    });
    expect(ignored).toEqual([
      "JobDefaults.Ops.Task.Publisher.Type",
      "NameProvider",
      "Orchestrator.Enabled",
      "Orchestrator.EvaluationBroker.MaxRetryCount",
      "Orchestrator.Scheduler.WorkerCount",
      "WebUI.Enabled",
    ]);
  });

  it("a compute node's: orchestrators, token, heartbeats, capacity, allow-listed paths, labels, log level", () => {
    const { config, ignored } = load("config-set-compute.yaml");
    expect(config).toMatchObject({
      Labels: { gpu: "false", zone: "b" },
      "Compute.Orchestrators": ["nats://orchestrator.example:4222"],
      "Compute.Auth.Token": TOKEN,
      "Compute.Heartbeat.Interval": 5000,
      "Compute.Heartbeat.InfoUpdateInterval": 60_000,
      "Compute.AllocatedCapacity.CPU": "80%",
      "Compute.AllocatedCapacity.Memory": "80%",
      "Compute.AllowListedLocalPaths": ["/data/**"],
      "Logging.Level": "warn",
    });
    expect(ignored).toEqual([
      "Compute.AllocatedCapacity.Disk",
      "Compute.Enabled",
      "Engines.Disabled",
      "JobAdmissionControl.RejectNetworkedJobs",
      "NameProvider",
    ]);
  });
});

describe("what is not Bacalhau's, or must not be ignored", () => {
  const yaml = configFile;

  it("names Bacalhau's keys as Bacalhau spells them: a key, a section, a path inside a map-valued key", () => {
    expect(bacalhauConfigKey("nameprovider")).toBe("NameProvider");
    expect(bacalhauConfigKey("webui")).toBe("WebUI");
    expect(bacalhauConfigKey("Orchestrator.Cluster")).toBe("Orchestrator.Cluster");
    expect(bacalhauConfigKey("API.Auth.Methods.ClientKey.Type")).toBe("API.Auth.Methods");
    expect(bacalhauConfigKey("API.Colour")).toBeUndefined();
    expect(bacalhauConfigKey("Node.Type")).toBeUndefined();
  });

  it("a map-valued key and an empty section are one warning each", () => {
    const file = yaml("API:\n  Auth:\n    Methods:\n      ClientKey:\n        Type: challenge\nPublishers:\n");
    expect(loadTracedConfig({ env: {}, files: [file] }).warnings).toEqual([
      `${file}: Bacalhau's API.Auth.Methods is not a Shoal setting; ignored`,
      `${file}: Bacalhau's Publishers is not a Shoal setting; ignored`,
    ]);
  });

  it("-c with a Bacalhau key warns without echoing its value", () => {
    const { warnings } = loadTracedConfig({ env: {}, settings: ["WebUI.Backend=http://secret@host"] });
    expect(warnings).toEqual(["-c WebUI.Backend=…: Bacalhau's WebUI.Backend is not a Shoal setting; ignored"]);
  });

  it("still stops at a key neither has, and at Bacalhau's access policy, which Shoal would not enforce", () => {
    expect(() => loadConfig({ env: {}, files: [yaml("NameProvidr: uuid\n")] })).toThrow(
      /unknown config key NameProvidr/,
    );
    // Bacalhau before 1.5 (Node.*): no longer Bacalhau's either.
    expect(() => loadConfig({ env: {}, files: [yaml("Node:\n  Type: [compute]\n")] })).toThrow(
      /unknown config key Node.Type/,
    );
    expect(() => loadConfig({ env: {}, settings: ["API.Auth.AccessPolicyPath=/etc/policy.rego"] })).toThrow(
      "-c API.Auth.AccessPolicyPath=…: Bacalhau's API.Auth.AccessPolicyPath cannot be used: Shoal does not run " +
        "Bacalhau's access policies; the Capabilities of API.Auth.Users say who may do what",
    );
  });
});
