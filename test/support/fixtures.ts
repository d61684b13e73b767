import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { defaultConfig, type ShoalConfig } from "../../src/config/keys.ts";
import type { NodeInfo } from "../../src/events/catalog/node-info.ts";

export const silentLogger = pino({ level: "silent" });

export function tempDir(prefix = "shoal-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A YAML config file holding `text`, in a fresh temp dir: its path. */
export function configFile(text: string): string {
  const file = join(tempDir(), "config.yaml");
  writeFileSync(file, text);
  return file;
}

/** An orchestrator on an external NATS, in a fresh DataDir, with its API on a free local port. */
export function orchestratorConfig(natsUrl: string, extra: Partial<ShoalConfig> = {}): ShoalConfig {
  return {
    ...defaultConfig(),
    DataDir: extra.DataDir ?? tempDir(), // no stray temp dir where the caller brings its own
    NodeID: "node-0",
    "API.Host": "127.0.0.1",
    // Plain HTTP: these tests fetch the API in-process; TLS has its own tests (test/e2e/api-tls.test.ts).
    "API.TLS.Disable": true,
    "Orchestrator.NATS.TLS.Disable": true,
    "API.Port": 0,
    "Orchestrator.NATS.URL": natsUrl,
    ...extra,
  };
}

export function computeInfo(nodeId: string, labels: Record<string, string> = {}): NodeInfo {
  return {
    NodeID: nodeId,
    NodeType: "Compute",
    Hostname: `host-${nodeId}`,
    Labels: { "Operating-System": "linux", Architecture: "amd64", ...labels },
    ComputeNodeInfo: {
      ExecutionEngines: ["docker"],
      Publishers: [],
      StorageSources: [],
      MaxCapacity: { CPU: 4, Memory: 8 * 1024 ** 3, Disk: 100 * 1024 ** 3, GPU: 0 },
      MaxJobRequirements: { CPU: 4, Memory: 8 * 1024 ** 3, Disk: 100 * 1024 ** 3, GPU: 0 },
    },
    BacalhauVersion: { GitVersion: "v0.1.0", GOOS: "linux", GOARCH: "amd64" },
  };
}
