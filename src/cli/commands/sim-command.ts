import { readFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { formatDuration, parseDuration } from "../../config/duration.ts";
import type { ShoalConfig } from "../../config/keys.ts";
import { createLogger } from "../../logging/create-logger.ts";
import { redactUrl } from "../../security/redact-url.ts";
import { FLEET_SPARE_FILES, openFileLimit } from "../../sim/open-file-limit.ts";
import { Simulation, type SimulationOptions } from "../../sim/simulation.ts";
import { CONFIG_OPTIONS, configFrom } from "../config-flags.ts";
import { UsageError } from "../usage-error.ts";
import { computeNatsTls, localOrchestratorDirs } from "../../compute/compute-nats-tls.ts";
import { waitForSignal } from "./serve-command.ts";
import { commandHelp } from "../help/command-help.ts";

export type SimSettings = Omit<
  SimulationOptions,
  "logger" | "token" | "orchestrators" | "infoUpdateMs" | "resourceUpdateMs"
> & {
  readonly orchestrator?: string;
  readonly tokenFile?: string;
};

export const OPTIONS = {
  ...CONFIG_OPTIONS,
  nodes: { type: "string" },
  orchestrator: { type: "string" },
  "token-file": { type: "string" },
  "heartbeat-interval": { type: "string" },
  jitter: { type: "string" },
  "join-rate": { type: "string" },
  kill: { type: "string" },
  "kill-at": { type: "string" },
  "revive-after": { type: "string" },
  duration: { type: "string" },
  "id-prefix": { type: "string" },
  "run-work": { type: "boolean" },
  "run-time": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

function duration(flag: string, text: string | undefined, fallback?: number): number | undefined {
  if (text === undefined) return fallback;
  const ms = parseDuration(text);
  if (ms === undefined)
    throw new UsageError(`--${flag}: ${JSON.stringify(text)} is not a duration (e.g. 500ms, 5s, 1m30s)`);
  return ms;
}

function positiveInteger(flag: string, text: string): number {
  if (!/^\d+$/.test(text) || Number(text) < 1 || !Number.isSafeInteger(Number(text)))
    throw new UsageError(`--${flag}: ${JSON.stringify(text)} is not a positive whole number`);
  return Number(text);
}

/** The sim's flags, checked; every mistake is a UsageError that names the flag. */
export function parseSimArgs(
  args: string[],
): { help: true } | { help: false; settings: SimSettings; values: { c?: string[]; config?: string[] } } {
  const { values } = parseArgs({ args, options: OPTIONS, strict: true, allowPositionals: false });
  if (values.help) return { help: true };
  if (values.nodes === undefined) throw new UsageError("--nodes is required (how many virtual nodes to run)");
  const nodes = positiveInteger("nodes", values.nodes);
  const heartbeatMs = duration("heartbeat-interval", values["heartbeat-interval"], 5000) as number;
  if (heartbeatMs < 10) throw new UsageError("--heartbeat-interval must be at least 10ms");
  const jitterMs = duration("jitter", values.jitter, Math.min(1000, heartbeatMs / 2)) as number;
  if (jitterMs * 2 > heartbeatMs)
    throw new UsageError(`--jitter must be at most half of --heartbeat-interval (${heartbeatMs / 2}ms)`);
  const rateText = values["join-rate"] ?? "1000/s";
  const rateMatch = /^(\d+(?:\.\d+)?)(\/s)?$/.exec(rateText);
  const joinRatePerSecond = Number(rateMatch?.[1]);
  if (!rateMatch || !(joinRatePerSecond > 0))
    throw new UsageError(`--join-rate: ${JSON.stringify(rateText)} is not a rate (e.g. 1000/s)`);
  let killFraction: number | undefined;
  if (values.kill !== undefined) {
    killFraction = Number(values.kill);
    if (values.kill.trim() === "" || !(killFraction > 0 && killFraction <= 1))
      throw new UsageError(`--kill: ${JSON.stringify(values.kill)} is not a share of the nodes (0 < F ≤ 1, e.g. 0.01)`);
  }
  for (const flag of ["kill-at", "revive-after"] as const) {
    if (values[flag] !== undefined && killFraction === undefined) throw new UsageError(`--${flag} needs --kill`);
  }
  const killAtMs = duration("kill-at", values["kill-at"], 60_000);
  const reviveAfterMs = duration("revive-after", values["revive-after"]);
  const durationMs = duration("duration", values.duration);
  if (durationMs !== undefined && durationMs <= 0) throw new UsageError("--duration must be longer than 0s");
  if (values["run-time"] !== undefined && !values["run-work"]) throw new UsageError("--run-time needs --run-work");
  const runMs = duration("run-time", values["run-time"], 1000) as number;
  const idPrefix = values["id-prefix"] ?? `sim-${randomBytes(2).toString("hex")}`;
  if (!/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/.test(idPrefix))
    throw new UsageError(
      `--id-prefix: ${JSON.stringify(idPrefix)} may hold only letters, digits, - and _ (at most 64)`,
    );
  if (values.orchestrator !== undefined && !/^(nats|tls|ws|wss):\/\/./.test(values.orchestrator)) {
    throw new UsageError(`--orchestrator: ${JSON.stringify(values.orchestrator)} is not a NATS URL (nats://host:port)`);
  }
  const settings: SimSettings = {
    nodes,
    idPrefix,
    heartbeatMs,
    jitterMs,
    joinRatePerSecond,
    ...(killFraction === undefined ? {} : { killFraction, killAtMs }),
    ...(reviveAfterMs === undefined ? {} : { reviveAfterMs }),
    ...(durationMs === undefined ? {} : { durationMs }),
    ...(values["run-work"] ? { runWork: { runMs } } : {}),
    ...(values.orchestrator === undefined ? {} : { orchestrator: values.orchestrator }),
    ...(values["token-file"] === undefined ? {} : { tokenFile: values["token-file"] }),
  };
  return { help: false, settings, values };
}

/** --token-file, else SHOAL_JOIN_TOKEN, else Compute.Auth.Token; none is a usage error. */
export function simJoinToken(settings: SimSettings, config: ShoalConfig, env: NodeJS.ProcessEnv): string {
  if (settings.tokenFile !== undefined) {
    let token: string;
    try {
      token = readFileSync(settings.tokenFile, "utf8").trim();
    } catch (e) {
      throw new UsageError(
        `--token-file: cannot read ${settings.tokenFile}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      );
    }
    if (token === "") throw new UsageError(`--token-file: ${settings.tokenFile} is empty`);
    return token;
  }
  const token = env.SHOAL_JOIN_TOKEN?.trim() || config["Compute.Auth.Token"];
  if (token === "")
    throw new UsageError("no join token: give --token-file FILE, or set SHOAL_JOIN_TOKEN (or Compute.Auth.Token)");
  return token;
}

export async function simCommand(args: string[]): Promise<number> {
  const parsed = parseSimArgs(args);
  if (parsed.help) {
    console.log(commandHelp("shoal sim"));
    return 0;
  }
  const { settings, values } = parsed;
  const limit = openFileLimit();
  if (limit !== undefined && settings.nodes + FLEET_SPARE_FILES > limit) {
    throw new UsageError(
      `--nodes ${settings.nodes}: each node holds one NATS connection, and this process may open ${limit} files (ulimit -n); run several sims with different --id-prefix`,
    );
  }
  const config = configFrom(values);
  const token = simJoinToken(settings, config, process.env);
  const orchestrators = settings.orchestrator === undefined ? config["Compute.Orchestrators"] : [settings.orchestrator];
  const logger = createLogger({ level: config["Logging.Level"], mode: config["Logging.Mode"], name: "sim" });
  const sim = Simulation.start({
    ...settings,
    orchestrators,
    tls: computeNatsTls({ ...config, "Compute.Orchestrators": orchestrators }, localOrchestratorDirs(config), logger),
    token,
    infoUpdateMs: config["Compute.Heartbeat.InfoUpdateInterval"],
    resourceUpdateMs: config["Compute.Heartbeat.ResourceUpdateInterval"],
    logger,
  });
  const work = settings.runWork ? `, running work for ${formatDuration(settings.runWork.runMs)} each` : "";
  console.log(
    `Simulating ${settings.nodes} nodes (${settings.idPrefix}-…) against ${orchestrators.map(redactUrl).join(", ")}${work}; Ctrl-C to stop.`,
  );
  await Promise.race([sim.finished, waitForSignal()]);
  const last = await sim.stop();
  console.log(
    `Stopped: ${last.registered} registered, ${last.heartbeating} heartbeating, ${last.refused} refusals, ${last.failed} undelivered, ${last.gaveUp} gave up.`,
  );
  return last.gaveUp > 0 ? 1 : 0;
}
