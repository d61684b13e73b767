import { parseArgs } from "node:util";
import { parseDuration } from "../../src/config/duration.ts";

/** The soak's scale and timeline; the defaults are CI's (about three minutes on a 2-core machine). */
export interface SoakSettings {
  /** Virtual nodes of one `shoal sim` process: joins, logins and heartbeats, no work. */
  readonly simNodes: number;
  readonly simJoinRatePerSecond: number;
  readonly simHeartbeatMs: number;
  /** Real `shoal compute` agents running Docker: the only nodes the soak's jobs match. */
  readonly agents: number;
  /** How long jobs are submitted; the kill -9 falls at a third of it, the SIGTERM restart at two thirds. */
  readonly jobPhaseMs: number;
  readonly jobsPerSecond: number;
  /** The orchestrator's Orchestrator.NodeManager.DisconnectTimeout. */
  readonly disconnectTimeoutMs: number;
  /** How long the soak waits for the fleet to join, jobs to end and the reader to catch up, each. */
  readonly settleMs: number;
  /** Leave the temporary directory (store, logs) in place for a look afterwards. */
  readonly keep: boolean;
}

export const SOAK_HELP = `Usage: npm run soak -- [options]   (or SOAK_* environment variables)

  --nodes N               shoal sim nodes (SOAK_NODES, default 3000)
  --join-rate R           sim node starts per second (SOAK_JOIN_RATE, default 250)
  --heartbeat D           sim heartbeat interval (SOAK_HEARTBEAT, default 5s)
  --agents N              real compute agents with Docker (SOAK_AGENTS, default 2)
  --duration D            job phase; restarts at 1/3 and 2/3 of it (SOAK_DURATION, default 120s)
  --job-rate R            jobs submitted per second (SOAK_JOB_RATE, default 0.5)
  --disconnect-timeout D  Orchestrator.NodeManager.DisconnectTimeout (SOAK_DISCONNECT_TIMEOUT, default 15s)
  --settle D              bound on each wait: joins, job ends, reader catch-up (SOAK_SETTLE, default 60s)
  --keep                  keep the temporary directory (SOAK_KEEP=1)
  -h, --help

For debugging at a small scale: npm run soak -- --nodes 100 --duration 30s --job-rate 1`;

const OPTIONS = {
  nodes: { type: "string" },
  "join-rate": { type: "string" },
  heartbeat: { type: "string" },
  agents: { type: "string" },
  duration: { type: "string" },
  "job-rate": { type: "string" },
  "disconnect-timeout": { type: "string" },
  settle: { type: "string" },
  keep: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

/** Flag, else environment variable, else CI's default; a bad value throws naming the flag and variable. */
export function soakSettings(args: readonly string[], env: NodeJS.ProcessEnv): SoakSettings | "help" {
  const { values } = parseArgs({ args: [...args], options: OPTIONS, strict: true, allowPositionals: false });
  if (values.help) return "help";
  const text = (flag: keyof typeof OPTIONS, variable: string, fallback: string): [string, string] => {
    const given = values[flag];
    if (typeof given === "string") return [given, `--${flag}`];
    return [env[variable] ?? fallback, env[variable] === undefined ? `--${flag}` : variable];
  };
  const count = (flag: keyof typeof OPTIONS, variable: string, fallback: string, min: number): number => {
    const [value, source] = text(flag, variable, fallback);
    const n = Number(value);
    if (!/^\d+$/.test(value) || n < min) throw new Error(`${source}: ${JSON.stringify(value)} is not a whole number ≥ ${min}`);
    return n;
  };
  const rate = (flag: keyof typeof OPTIONS, variable: string, fallback: string): number => {
    const [value, source] = text(flag, variable, fallback);
    const n = Number(value.replace(/\/s$/, ""));
    if (value.trim() === "" || !(n > 0)) throw new Error(`${source}: ${JSON.stringify(value)} is not a rate per second above 0`);
    return n;
  };
  const duration = (flag: keyof typeof OPTIONS, variable: string, fallback: string): number => {
    const [value, source] = text(flag, variable, fallback);
    const ms = parseDuration(value);
    if (ms === undefined || ms <= 0) throw new Error(`${source}: ${JSON.stringify(value)} is not a duration above 0 (e.g. 500ms, 30s, 2m)`);
    return ms;
  };
  return {
    simNodes: count("nodes", "SOAK_NODES", "3000", 0),
    simJoinRatePerSecond: rate("join-rate", "SOAK_JOIN_RATE", "250"),
    simHeartbeatMs: duration("heartbeat", "SOAK_HEARTBEAT", "5s"),
    agents: count("agents", "SOAK_AGENTS", "2", 1),
    jobPhaseMs: duration("duration", "SOAK_DURATION", "120s"),
    jobsPerSecond: rate("job-rate", "SOAK_JOB_RATE", "0.5"),
    disconnectTimeoutMs: duration("disconnect-timeout", "SOAK_DISCONNECT_TIMEOUT", "15s"),
    settleMs: duration("settle", "SOAK_SETTLE", "60s"),
    keep: values.keep === true || env.SOAK_KEEP === "1",
  };
}
