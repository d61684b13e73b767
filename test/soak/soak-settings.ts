import { parseArgs } from "node:util";
import { parseDuration } from "../../src/config/duration.ts";

/** The soak's scale and timeline; the defaults are CI's (four to five minutes on a busy 2-core machine). */
export interface SoakSettings {
  /** Virtual nodes of one `shoal sim --run-work` process: joins, logins, heartbeats, and work run in memory. */
  readonly simNodes: number;
  readonly simJoinRatePerSecond: number;
  readonly simHeartbeatMs: number;
  /** Real `shoal compute` agents running Docker: the only nodes the Docker jobs match. */
  readonly agents: number;
  /** How long jobs are submitted; the kill -9 falls at a third of it, the SIGTERM restart at two thirds. */
  readonly jobPhaseMs: number;
  /** Docker jobs (on the agents) submitted per second. */
  readonly jobsPerSecond: number;
  /** Jobs for the sim nodes submitted per second (besides the Docker ones); none without sim nodes. */
  readonly simJobsPerSecond: number;
  /** How long a sim node's batch or ops execution runs. */
  readonly simRunMs: number;
  /**
   * The orchestrator's Orchestrator.NodeManager.DisconnectTimeout: four sim heartbeats by default,
   * the ratio of Shoal's own defaults (15s heartbeats, 1m), so that a blamed node missed four.
   */
  readonly disconnectTimeoutMs: number;
  /** How long the soak waits for the fleet to join (joins cost CPU: about 50–100/s on two loaded cores). */
  readonly joinTimeoutMs: number;
  /** How long the soak waits for jobs to end and for the reader to catch up, each. */
  readonly settleMs: number;
  /** Leave the temporary directory (store, logs) in place for a look afterwards. */
  readonly keep: boolean;
}

export const SOAK_HELP = `Usage: npm run soak -- [options]   (or SOAK_* environment variables)

  --nodes N               shoal sim nodes (SOAK_NODES, default 2000)
  --join-rate R           sim node starts per second (SOAK_JOIN_RATE, default 100)
  --heartbeat D           sim heartbeat interval (SOAK_HEARTBEAT, default 5s)
  --agents N              real compute agents with Docker (SOAK_AGENTS, default 2)
  --duration D            job phase; restarts at 1/3 and 2/3 of it (SOAK_DURATION, default 120s)
  --job-rate R            Docker jobs (on the agents) submitted per second (SOAK_JOB_RATE, default 0.5)
  --sim-job-rate R        jobs for the sim nodes submitted per second (SOAK_SIM_JOB_RATE, default 4)
  --sim-run-time D        how long a sim batch or ops execution runs (SOAK_SIM_RUN_TIME, default 2s)
  --disconnect-timeout D  Orchestrator.NodeManager.DisconnectTimeout (SOAK_DISCONNECT_TIMEOUT, default 4 heartbeats)
  --join-timeout D        bound on the fleet's join (SOAK_JOIN_TIMEOUT, default 120s)
  --settle D              bound on the wait for job ends, and for the reader (SOAK_SETTLE, default 180s)
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
  "sim-job-rate": { type: "string" },
  "sim-run-time": { type: "string" },
  "disconnect-timeout": { type: "string" },
  "join-timeout": { type: "string" },
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
    if (/^\d+$/.test(value) && n >= min) return n;
    throw new Error(`${source}: ${JSON.stringify(value)} is not a whole number ≥ ${min}`);
  };
  const rate = (flag: keyof typeof OPTIONS, variable: string, fallback: string): number => {
    const [value, source] = text(flag, variable, fallback);
    const n = Number(value.replace(/\/s$/, ""));
    if (value.trim() !== "" && n > 0) return n;
    throw new Error(`${source}: ${JSON.stringify(value)} is not a rate per second above 0`);
  };
  const duration = (flag: keyof typeof OPTIONS, variable: string, fallback: string): number => {
    const [value, source] = text(flag, variable, fallback);
    const ms = parseDuration(value);
    if (ms !== undefined && ms > 0) return ms;
    throw new Error(`${source}: ${JSON.stringify(value)} is not a duration above 0 (e.g. 500ms, 30s, 2m)`);
  };
  const heartbeatMs = duration("heartbeat", "SOAK_HEARTBEAT", "5s");
  return {
    simNodes: count("nodes", "SOAK_NODES", "2000", 0),
    simJoinRatePerSecond: rate("join-rate", "SOAK_JOIN_RATE", "100"),
    simHeartbeatMs: heartbeatMs,
    agents: count("agents", "SOAK_AGENTS", "2", 1),
    jobPhaseMs: duration("duration", "SOAK_DURATION", "120s"),
    jobsPerSecond: rate("job-rate", "SOAK_JOB_RATE", "0.5"),
    simJobsPerSecond: rate("sim-job-rate", "SOAK_SIM_JOB_RATE", "4"),
    simRunMs: duration("sim-run-time", "SOAK_SIM_RUN_TIME", "2s"),
    disconnectTimeoutMs: duration("disconnect-timeout", "SOAK_DISCONNECT_TIMEOUT", `${4 * heartbeatMs}ms`),
    joinTimeoutMs: duration("join-timeout", "SOAK_JOIN_TIMEOUT", "120s"),
    settleMs: duration("settle", "SOAK_SETTLE", "180s"),
    keep: values.keep === true || env.SOAK_KEEP === "1",
  };
}
