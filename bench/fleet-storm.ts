/**
 * Registration storm over the real protocol: N virtual nodes (one nkey and one NATS connection
 * each, `shoal sim`'s fleet, in this process) join a real `shoal serve` (its own process, its own
 * nats-server) as fast as the join rate lets them. Measures the time until every join is
 * acknowledged and until every node is listed over REST, then, after the fleet has heartbeated
 * for a while, the RSS of the orchestrator, of its nats-server and of this process.
 *
 * Run: npx tsx bench/fleet-storm.ts [--nodes N] [--join-rate R] [--heartbeat-interval-ms MS] [--settle-ms MS]
 * Each node holds a file descriptor here and one in nats-server: N is bounded by `ulimit -n`.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import pino from "pino";
import { FLEET_SPARE_FILES, openFileLimit } from "../src/sim/open-file-limit.ts";
import { VirtualFleet } from "../src/sim/virtual-fleet.ts";
import { freePort } from "./support/free-port.ts";
import { rssMB } from "./support/process-rss.ts";

export interface FleetStormOptions {
  readonly nodes?: number;
  readonly joinRatePerSecond?: number;
  readonly heartbeatMs?: number;
  /** Nodes joining at once at most (each holds a join login meanwhile). */
  readonly maxJoining?: number;
  /** How long the fleet heartbeats after it is listed, before memory is read. */
  readonly settleMs?: number;
  readonly timeoutMs?: number;
  readonly log?: (line: string) => void;
}

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** What this machine can hold: one descriptor per node here and in nats-server, some to spare. */
export function defaultStormNodes(): number {
  const limit = openFileLimit() ?? 20_000;
  return Math.max(100, Math.floor((limit - 4 * FLEET_SPARE_FILES) / 1000) * 1000);
}



const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string, everyMs = 100): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** Counts the sim's nodes listed by the REST API (every page). */
async function listedSimNodes(apiUrl: string, prefix: string): Promise<number> {
  let count = 0;
  let token: string | undefined;
  do {
    const url = `${apiUrl}/api/v1/orchestrator/nodes?limit=10000&order_by=id${token ? `&next_token=${encodeURIComponent(token)}` : ""}`;
    const res = await fetch(url);
    if (!res.ok) throw new Error(`GET nodes: ${res.status} ${await res.text()}`);
    const body = (await res.json()) as { Nodes: { Info: { NodeID: string } }[]; NextToken?: string };
    count += body.Nodes.filter((n) => n.Info.NodeID.startsWith(`${prefix}-`)).length;
    token = body.NextToken || undefined;
  } while (token);
  return count;
}

export async function run(options: FleetStormOptions = {}): Promise<Record<string, number | string>> {
  const nodes = options.nodes ?? defaultStormNodes();
  const log = options.log ?? ((line: string) => console.error(line));
  const joinRatePerSecond = options.joinRatePerSecond ?? 5000;
  const heartbeatMs = options.heartbeatMs ?? 5000;
  const settleMs = options.settleMs ?? 15_000;
  const timeoutMs = options.timeoutMs ?? 600_000;
  const dataDir = mkdtempSync(join(tmpdir(), "shoal-storm-"));
  const [natsPort, apiPort] = [await freePort(), await freePort()];
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  const serve: ChildProcess = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      join(ROOT, "src/cli/main.ts"),
      "serve",
      ...["-c", `DataDir=${dataDir}`, "-c", "API.Host=127.0.0.1", "-c", `API.Port=${apiPort}`, "-c", "Orchestrator.Host=127.0.0.1", "-c", `Orchestrator.Port=${natsPort}`],
      ...["-c", "Orchestrator.NodeManager.MaxRegistrationsPerSecond=0", "-c", `Orchestrator.NodeManager.DisconnectTimeout=${Math.max(15_000, 3 * heartbeatMs)}ms`],
      ...["-c", "Logging.Level=warn", "-c", "Logging.Mode=json"],
    ],
    { cwd: ROOT, stdio: ["ignore", "ignore", "pipe"] },
  );
  let serveErr = "";
  serve.stderr?.on("data", (c: Buffer) => (serveErr = (serveErr + c.toString()).slice(-4000)));
  const fleetLogger = pino({ level: "warn" }, pino.destination(2));
  let fleet: VirtualFleet | undefined;
  try {
    await until(async () => (await fetch(`${apiUrl}/api/v1/agent/alive`).catch(() => undefined))?.ok === true, 60_000, `shoal serve (${serveErr.slice(-500)})`, 200);
    const natsPid = Number(readFileSync(join(dataDir, "nats", "nats-server.pid"), "utf8").trim());
    const token = readFileSync(join(dataDir, "credentials", "join-token"), "utf8").trim();
    const before = { orchestrator: rssMB(serve.pid), nats: rssMB(natsPid) };
    const idPrefix = "storm";
    fleet = new VirtualFleet({
      nodes,
      idPrefix,
      orchestrators: [`nats://127.0.0.1:${natsPort}`],
      token,
      heartbeatMs,
      jitterMs: Math.min(1000, heartbeatMs / 5),
      infoUpdateMs: 60_000,
      resourceUpdateMs: 30_000,
      joinRatePerSecond,
      ...(options.maxJoining === undefined ? {} : { maxJoining: options.maxJoining }),
      logger: fleetLogger,
    });
    const t0 = performance.now();
    fleet.start();
    let lastLog = 0;
    await until(
      () => {
        const p = fleet!.progress();
        if (performance.now() - lastLog > 5000) {
          lastLog = performance.now();
          log(`  ${((performance.now() - t0) / 1000).toFixed(0)} s: ${p.registered} registered, ${p.joining} joining, ${p.failed} undelivered, ${p.gaveUp} gave up`);
        }
        if (p.gaveUp > 0) throw new Error(`${p.gaveUp} nodes gave up joining: ${JSON.stringify(p)}`);
        return p.registered === nodes;
      },
      timeoutMs,
      "every join acknowledged",
    );
    const ackS = (performance.now() - t0) / 1000;
    const joinProgress = fleet.progress();
    await until(async () => (await listedSimNodes(apiUrl, idPrefix)) === nodes, timeoutMs, "every node listed", 500);
    const listedS = (performance.now() - t0) / 1000;
    const hb0 = fleet.progress().heartbeatsAccepted;
    const h0 = performance.now();
    await sleep(settleMs);
    const settled = fleet.progress();
    const heartbeatsPerSecond = Math.round(((settled.heartbeatsAccepted - hb0) * 1000) / (performance.now() - h0));
    const result = {
      nodes,
      joinRatePerSecond,
      heartbeatMs,
      ackS: Math.round(ackS * 10) / 10,
      listedS: Math.round(listedS * 10) / 10,
      joinsPerSecond: Math.round(nodes / ackS),
      joinAttemptsUndelivered: joinProgress.failed,
      orchestratorRssMB: rssMB(serve.pid),
      natsServerRssMB: rssMB(natsPid),
      orchestratorPlusNatsMB: rssMB(serve.pid) + rssMB(natsPid),
      orchestratorRssBeforeMB: before.orchestrator,
      natsServerRssBeforeMB: before.nats,
      simRssMB: Math.round(process.memoryUsage.rss() / 2 ** 20),
      heartbeatsPerSecond,
      heartbeatingAfterSettle: settled.heartbeating,
      refusedAfterJoin: settled.refused - joinProgress.refused,
      undeliveredAfterJoin: settled.failed - joinProgress.failed,
    };
    return result;
  } finally {
    await fleet?.stop();
    serve.kill("SIGTERM");
    await new Promise((r) => (serve.exitCode !== null ? r(undefined) : serve.once("exit", r)));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: { nodes: { type: "string" }, "join-rate": { type: "string" }, "heartbeat-interval-ms": { type: "string" }, "settle-ms": { type: "string" }, "max-joining": { type: "string" } },
  });
  const num = (v: string | undefined) => (v === undefined ? undefined : Number(v));
  const result = await run({
    ...(values.nodes === undefined ? {} : { nodes: num(values.nodes) as number }),
    ...(values["join-rate"] === undefined ? {} : { joinRatePerSecond: num(values["join-rate"]) as number }),
    ...(values["heartbeat-interval-ms"] === undefined ? {} : { heartbeatMs: num(values["heartbeat-interval-ms"]) as number }),
    ...(values["settle-ms"] === undefined ? {} : { settleMs: num(values["settle-ms"]) as number }),
    ...(values["max-joining"] === undefined ? {} : { maxJoining: num(values["max-joining"]) as number }),
  });
  console.log(JSON.stringify(result, null, 2));
}
