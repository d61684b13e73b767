import { expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load-config.ts";
import { resolveApiAuth } from "../../../src/orchestrator/api-auth.ts";
import { capturedLogger } from "../../support/captured-logger.ts";
import { tempDir } from "../../support/fixtures.ts";

const WARN = 40;

it("warns in cluster mode when each orchestrator would generate an admin key of its own", () => {
  const { logger, records } = capturedLogger();
  const config = loadConfig({ settings: [`DataDir=${tempDir()}`, "Orchestrator.Cluster.Enabled=true"], env: {} });
  const { adminKey } = resolveApiAuth(config, logger);
  expect(adminKey?.created).toBe(true);
  expect(records.filter((r) => r.level === WARN).map((r) => r.msg)).toEqual([
    expect.stringMatching(/^cluster mode with API\.Auth\.Users empty: .* works on it alone/),
  ]);
});

it("says nothing of the kind for a sole orchestrator, or in cluster mode with API users", () => {
  const { logger, records } = capturedLogger();
  resolveApiAuth(loadConfig({ settings: [`DataDir=${tempDir()}`], env: {} }), logger);
  const users = JSON.stringify([{ Alias: "ci", APIKey: "a".repeat(32), Capabilities: [{ Actions: ["read:node"] }] }]);
  const clustered = loadConfig({
    settings: [`DataDir=${tempDir()}`, "Orchestrator.Cluster.Enabled=true", `API.Auth.Users=${users}`],
    env: {},
  });
  resolveApiAuth(clustered, logger);
  expect(records.filter((r) => r.level >= WARN)).toEqual([]);
});
