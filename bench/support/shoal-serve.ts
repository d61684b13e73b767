import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { adminApiKeyPath } from "../../src/security/admin-api-key.ts";
import { startChild, type RunningChild } from "./child-process.ts";
import { freePort } from "./free-port.ts";

const SHOAL = join(import.meta.dirname, "../../bin/shoal");

/**
 * What bin/shoal's `#!/usr/bin/env -S …` line starts node with: its environment assignments and
 * node's flags (memory settings, docs/performance.md). A bench that runs `node <its flags> bin/shoal`
 * bypasses that line, so it passes these itself: the orchestrator it measures is the one users run.
 */
export function shoalLaunch(): {
  readonly env: Readonly<Record<string, string>>;
  readonly nodeFlags: readonly string[];
} {
  const line = readFileSync(SHOAL, "utf8").split("\n", 1)[0] ?? "";
  const words = line
    .replace(/^#!\S*env\s+-S\s+/, "")
    .split(/\s+/)
    .filter((w) => w !== "");
  const nodeAt = words.indexOf("node");
  if (!line.startsWith("#!") || nodeAt < 0) throw new Error(`bin/shoal: unexpected first line ${JSON.stringify(line)}`);
  const env = Object.fromEntries(
    words.slice(0, nodeAt).map((w) => [w.slice(0, w.indexOf("=")), w.slice(w.indexOf("=") + 1)]),
  );
  return { env, nodeFlags: words.slice(nodeAt + 1) };
}

export interface ServedOrchestrator {
  readonly apiUrl: string;
  readonly dataDir: string;
  /** The generated admin key (read:agent included): what /metrics is scraped with. */
  readonly adminKey: string;
  readonly process: RunningChild;
  /** Prometheus samples of /metrics, keyed `name{labels}` as printed. */
  metrics(): Promise<Map<string, number>>;
  stop(): Promise<void>;
}

/**
 * `shoal serve` as a user starts it (the compiled CLI through bin/shoal, its own process) in a
 * fresh DataDir, with `-c` settings on top of a free API port and warn-level logs.
 */
export async function serveOrchestrator(
  settings: Readonly<Record<string, string | number>>,
  options: {
    /** Runs on the fresh DataDir before `shoal serve` starts (e.g. writes events into its store). */
    readonly prepare?: (dataDir: string) => Promise<void>;
    readonly readyTimeoutMs?: number;
    /** Node's own flags for `shoal serve` (a CPU profile: `--cpu-prof --cpu-prof-dir=…`, written when it exits). */
    readonly nodeArgs?: readonly string[];
  } = {},
): Promise<ServedOrchestrator> {
  const dataDir = mkdtempSync(join(tmpdir(), "shoal-bench-serve-"));
  const apiPort = await freePort();
  const config = {
    "API.Host": "127.0.0.1",
    "API.Port": apiPort,
    // The benchmarks read the API with fetch, which would not trust the generated CA; they measure the orchestrator.
    "API.TLS.Disable": true,
    "Orchestrator.NATS.TLS.Disable": true,
    DataDir: dataDir,
    "Logging.Level": "warn",
    ...settings,
  };
  const args = ["serve", ...Object.entries(config).flatMap(([k, v]) => ["-c", `${k}=${v}`])];
  let child: RunningChild;
  try {
    await options.prepare?.(dataDir);
    child =
      options.nodeArgs === undefined
        ? await startChild(SHOAL, args, "is running.", options.readyTimeoutMs)
        : await startChild(
            process.execPath,
            [...shoalLaunch().nodeFlags, ...options.nodeArgs, SHOAL, ...args],
            "is running.",
            options.readyTimeoutMs,
            shoalLaunch().env,
          );
  } catch (e) {
    rmSync(dataDir, { recursive: true, force: true });
    throw e;
  }
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  const adminKey = readFileSync(adminApiKeyPath(dataDir), "utf8").trim();
  return {
    apiUrl,
    dataDir,
    adminKey,
    process: child,
    metrics: async () => {
      const res = await fetch(`${apiUrl}/metrics`, { headers: { authorization: `Bearer ${adminKey}` } });
      if (res.status !== 200) throw new Error(`GET /metrics: ${res.status} ${await res.text()}`);
      const samples = new Map<string, number>();
      for (const line of (await res.text()).split("\n")) {
        if (line === "" || line.startsWith("#")) continue;
        const cut = line.lastIndexOf(" ");
        samples.set(line.slice(0, cut), Number(line.slice(cut + 1)));
      }
      return samples;
    },
    stop: async () => {
      await child.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
