import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { Worker, type ResourceLimits, type TransferListItem } from "node:worker_threads";

/**
 * Starts one of the store's worker threads, `name` being its entry beside this file (without
 * extension). The compiled build (dist/) runs the worker's .js. From sources (tsx for the
 * benches, vitest for the tests) it is the .ts: Node 20 cannot load that, and neither
 * `--import tsx` in a worker's execArgv nor vitest's transform reaches a worker, so a one-line
 * bootstrap registers tsx's loader in the worker first.
 */
export function startStoreWorker(
  name: string,
  workerData: unknown,
  resourceLimits: ResourceLimits,
  transferList: readonly TransferListItem[] = [],
): Worker {
  const fromSources = import.meta.url.endsWith(".ts");
  const entry = new URL(`./${name}${fromSources ? ".ts" : ".js"}`, import.meta.url);
  const options = { workerData, execArgv: [] as string[], resourceLimits, transferList: [...transferList] };
  if (!fromSources) return new Worker(entry, options);
  const pkg = createRequire(import.meta.url).resolve("tsx/package.json");
  const exports = (
    JSON.parse(readFileSync(pkg, "utf8")) as { exports: Record<string, { import: { default: string } }> }
  ).exports;
  const api = pathToFileURL(join(dirname(pkg), exports["./esm/api"]!.import.default)).href;
  const bootstrap = `import(${JSON.stringify(api)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); });`;
  return new Worker(bootstrap, { ...options, eval: true });
}
