// Preloaded into a benchmarked `shoal serve` (`node --expose-gc --import <this file> bin/shoal
// serve`, bench/orchestrator-memory.ts): on SIGWINCH it runs a full garbage collection and writes
// process.memoryUsage() — heap used, external, arrayBuffers, which /metrics does not show — as one
// JSON line to memoryProbePath(pid). Nothing else: no timer, no allocation until asked.
// Plain JavaScript: the compiled CLI runs without the TypeScript loader.
import { appendFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { getHeapSpaceStatistics } from "node:v8";

const path = join(tmpdir(), `shoal-memory-probe-${process.pid}.jsonl`);

process.on("SIGWINCH", () => {
  const before = process.memoryUsage();
  // Committed size per V8 space before the GC: where heap total goes (new space: the semi-spaces).
  const spaces = Object.fromEntries(
    getHeapSpaceStatistics().map((s) => [s.space_name, { size: s.space_size, used: s.space_used_size }]),
  );
  const gc = globalThis.gc;
  if (typeof gc === "function") gc();
  const after = process.memoryUsage();
  appendFileSync(path, `${JSON.stringify({ at: Date.now(), gc: typeof gc === "function", before, after, spaces })}\n`);
});
