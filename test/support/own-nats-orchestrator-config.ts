import { defaultConfig, type ShoalConfig } from "../../src/config/keys.ts";
import { tempDir } from "./fixtures.ts";
import { freePort } from "./nats-server.ts";

/**
 * An orchestrator with its own NATS server (for compute nodes to join) on a free local port, its
 * API on another, in a fresh DataDir.
 */
export async function ownNatsOrchestratorConfig(
  dataDirPrefix: string,
  extra: Partial<ShoalConfig> = {},
): Promise<ShoalConfig> {
  return {
    ...defaultConfig(),
    DataDir: tempDir(dataDirPrefix),
    NodeID: "node-0",
    "API.Host": "127.0.0.1",
    // Plain HTTP: these tests fetch the API in-process; TLS has its own tests (test/e2e/api-tls.test.ts).
    "API.TLS.Disable": true,
    "Orchestrator.NATS.TLS.Disable": true,
    "API.Port": 0,
    "Orchestrator.Host": "127.0.0.1",
    "Orchestrator.Port": await freePort(),
    ...extra,
  };
}
