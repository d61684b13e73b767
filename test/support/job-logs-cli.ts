import { spawn } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { shoalEnv } from "./shoal-process.ts";

const COMMAND = pathToFileURL(join(import.meta.dirname, "../../dist/src/cli/commands/job-logs-command.js")).href;

/**
 * `shoal job logs …` until main.ts routes to it: the compiled command run in its own node process,
 * its exit code and output as main.ts would give them (UsageError: 2, other errors: 1 with
 * `Error: …`). `stdoutAt` holds when each piece of stdout arrived; `live.stdout`, if given, is
 * the stdout so far while it runs.
 */
export function runJobLogs(
  args: readonly string[],
  live?: { stdout: string },
): Promise<{ code: number | null; stdout: string; stderr: string; stdoutAt: { at: number; text: string }[] }> {
  const script = `
const { jobLogsCommand } = await import(${JSON.stringify(COMMAND)});
try { process.exitCode = await jobLogsCommand(process.argv.slice(1)); }
catch (e) { console.error("Error: " + e.message); process.exitCode = e.name === "UsageError" || String(e.code).startsWith("ERR_PARSE_ARGS") ? 2 : 1; }`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script, "--", ...args], {
    env: shoalEnv(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  const stdoutAt: { at: number; text: string }[] = [];
  child.stdout.on("data", (d: Buffer) => {
    stdout += d.toString();
    if (live) live.stdout = stdout;
    stdoutAt.push({ at: Date.now(), text: d.toString() });
  });
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.once("close", (code) => resolve({ code, stdout, stderr, stdoutAt })));
}
