/**
 * Registration storm over the real protocol, against a real `shoal serve` (the compiled CLI, its
 * own process, its embedded nats-server in operator mode, SQLite): N nodes join from `clients`
 * client processes (bench/support/storm-joiner.ts), `concurrency` joins in flight in each. A
 * join is what an agent does on its first start: the join token's login, one join request,
 * then a login with the node's own user JWT. By default each node then closes its connection,
 * so the storm measures joins, not held connections (`hold=1` keeps them, up to `ulimit -n`,
 * each heartbeating, for the memory figures).
 *
 * Figures: joins/s; time until every node is APPROVED and listed over REST; the CPU the
 * orchestrator and its nats-server spent per join (/proc/<pid>/stat, over the storm), and from
 * those what 100,000 joins would need at the least on this machine's two cores; RSS.
 *
 * Run: npx tsx bench/fleet-storm.ts [nodes=10000] [clients=4] [concurrency=32] [hold=0]
 *      (Node flags for `shoal serve`, e.g. a CPU profile: STORM_SERVE_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof")
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { runStandalone, setting, type BenchFigure, type BenchOptions, type BenchResult } from "./bench-result.ts";
import { freePort } from "./support/free-port.ts";
import { processCpuMs, processCpuSplitMs, threadCpuMs } from "./support/process-cpu.ts";
import { rssMB } from "./support/process-rss.ts";
import { serveOrchestrator, type ServedOrchestrator } from "./support/shoal-serve.ts";

const JOINER = join(import.meta.dirname, "support/storm-joiner.ts");
const TARGET_NODES = 100_000;
const TARGET_SECONDS = 20;
const PREFIX = "storm";
const ID_WIDTH = 6;

export interface JoinerReport {
  readonly joined: number;
  readonly refused: number;
  readonly failed: number;
  readonly refusedByCode: Readonly<Record<string, number>>;
  readonly errors: readonly string[];
  readonly lastJoinAt: number;
  readonly done: boolean;
}

export interface Joiner {
  readonly child: ChildProcess;
  last: JoinerReport;
  ready: boolean;
  exited: boolean;
  stderr: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(" ");

/** One storm client process (bench/support/storm-joiner.ts); `env` adds to its environment (STORM_AS_AGENT=1). */
export function startJoiner(
  natsUrl: string,
  tokenFile: string,
  from: number,
  count: number,
  concurrency: number,
  hold: boolean,
  env: Readonly<Record<string, string>> = {},
): Joiner {
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      JOINER,
      natsUrl,
      tokenFile,
      PREFIX,
      String(from),
      String(count),
      String(concurrency),
      hold ? "1" : "0",
    ],
    {
      env: { ...process.env, NODE_OPTIONS: "", STORM_ID_WIDTH: String(ID_WIDTH), ...env },
      stdio: ["pipe", "pipe", "pipe"],
    },
  );
  const joiner: Joiner = {
    child,
    last: { joined: 0, refused: 0, failed: 0, refusedByCode: {}, errors: [], lastJoinAt: 0, done: false },
    ready: false,
    exited: false,
    stderr: "",
  };
  let buffer = "";
  child.stdout?.on("data", (d: Buffer) => {
    buffer += d.toString();
    let nl: number;
    while ((nl = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (line === "ready") joiner.ready = true;
      else if (line.startsWith("{")) joiner.last = JSON.parse(line) as JoinerReport;
    }
  });
  child.stderr?.on("data", (d: Buffer) => (joiner.stderr = (joiner.stderr + d.toString()).slice(-4000)));
  child.once("exit", () => (joiner.exited = true));
  return joiner;
}

/** Counts this storm's nodes listed by the REST API as APPROVED (every page). */
async function listedApproved(orchestrator: ServedOrchestrator): Promise<number> {
  let count = 0;
  let token: string | undefined;
  do {
    const url = `${orchestrator.apiUrl}/api/v1/orchestrator/nodes?limit=10000&order_by=id&filter-approval=APPROVED${token ? `&next_token=${encodeURIComponent(token)}` : ""}`;
    const res = await fetch(url, { headers: { authorization: `Bearer ${orchestrator.adminKey}` } });
    if (!res.ok) throw new Error(`GET nodes: ${res.status} ${await res.text()}`);
    const body = (await res.json()) as { Nodes: { Info: { NodeID: string } }[]; NextToken?: string };
    count += body.Nodes.filter((n) => n.Info.NodeID.startsWith(`${PREFIX}-`)).length;
    token = body.NextToken || undefined;
  } while (token);
  return count;
}

export async function run(options: BenchOptions): Promise<BenchResult> {
  const nodes = setting(options, "fleet-storm.nodes", options.quick ? 200 : 10_000);
  const clients = setting(options, "fleet-storm.clients", options.quick ? 2 : 4);
  const concurrency = setting(options, "fleet-storm.concurrency", 32);
  const hold = setting(options, "fleet-storm.hold", 0) === 1;
  const settleSeconds = setting(options, "fleet-storm.settleSeconds", hold ? 15 : 0);
  const log = options.log;
  const natsPort = await freePort();
  const orchestrator = await serveOrchestrator(
    {
      "Orchestrator.Host": "127.0.0.1",
      "Orchestrator.Port": natsPort,
      "Orchestrator.NodeManager.MaxRegistrationsPerSecond": 0,
      // Nodes that join and leave must not turn into health events while the storm is measured.
      "Orchestrator.NodeManager.DisconnectTimeout": hold ? "15s" : "1h",
      "Orchestrator.NodeManager.UnknownTimeout": hold ? "1h" : "2h",
    },
    { ...(process.env.STORM_SERVE_NODE_ARGS ? { nodeArgs: process.env.STORM_SERVE_NODE_ARGS.split(" ") } : {}) },
  );
  const joiners: Joiner[] = [];
  try {
    const orchestratorPid = orchestrator.process.child.pid;
    const natsPid = Number(readFileSync(join(orchestrator.dataDir, "nats", "nats-server.pid"), "utf8").trim());
    const natsUrl = `nats://127.0.0.1:${natsPort}`;
    const tokenFile = join(orchestrator.dataDir, "credentials", "join-token");
    const before = {
      orchestratorRss: rssMB(orchestratorPid),
      natsRss: rssMB(natsPid),
      orchestratorCpu: processCpuMs(orchestratorPid),
      orchestratorMainCpu: threadCpuMs(orchestratorPid),
      natsCpu: processCpuMs(natsPid),
      orchestratorSplit: processCpuSplitMs(orchestratorPid),
    };
    const loadBefore = load();
    log(
      `  ${nodes} nodes from ${clients} client processes, ${concurrency} joins in flight each${hold ? ", connections held" : ", each closes after its own login"}; load ${loadBefore}`,
    );

    const share = Math.ceil(nodes / clients);
    for (let c = 0; c < clients; c++) {
      const from = c * share;
      const count = Math.min(share, nodes - from);
      if (count > 0) joiners.push(startJoiner(natsUrl, tokenFile, from, count, concurrency, hold));
    }
    while (!joiners.every((j) => j.ready)) {
      const broken = joiners.find((j) => j.exited);
      if (broken) throw new Error(`a storm client did not start: ${broken.stderr.slice(-1500)}`);
      await sleep(50);
    }
    const t0 = performance.now();
    const startedAt = Date.now();
    for (const j of joiners) j.child.stdin?.write("go\n");
    const total = () => joiners.reduce((sum, j) => sum + j.last.joined, 0);
    let lastLog = 0;
    while (!joiners.every((j) => j.last.done)) {
      const broken = joiners.find((j) => j.exited && !j.last.done);
      if (broken) throw new Error(`a storm client stopped: ${broken.stderr.slice(-1500)}`);
      if (performance.now() - lastLog > 5000) {
        lastLog = performance.now();
        const failed = joiners.reduce((sum, j) => sum + j.last.failed, 0);
        const refused = joiners.reduce((sum, j) => sum + j.last.refused, 0);
        const errors = [...new Set(joiners.flatMap((j) => j.last.errors))].slice(0, 3);
        const codes = JSON.stringify(Object.assign({}, ...joiners.map((j) => j.last.refusedByCode)));
        log(
          `  ${((performance.now() - t0) / 1000).toFixed(0)} s: ${total()} joined, ${refused} refused ${codes}, ${failed} failed; load ${load()}${errors.length > 0 ? `; e.g. ${errors.join(" | ")}` : ""}`,
        );
      }
      await sleep(100);
    }
    const joinedS = (Math.max(...joiners.map((j) => j.last.lastJoinAt)) - startedAt) / 1000;
    const afterJoins = {
      orchestratorCpu: processCpuMs(orchestratorPid),
      orchestratorMainCpu: threadCpuMs(orchestratorPid),
      natsCpu: processCpuMs(natsPid),
      orchestratorSplit: processCpuSplitMs(orchestratorPid),
      at: performance.now(),
    };
    let listed = 0;
    for (;;) {
      listed = await listedApproved(orchestrator);
      if (listed === nodes) break;
      if (performance.now() - afterJoins.at > 120_000)
        throw new Error(`only ${listed} of ${nodes} nodes listed as APPROVED 120 s after the last join`);
      await sleep(200);
    }
    const listedS = (performance.now() - t0) / 1000;
    const loadAfter = load();
    const cpu = {
      orchestrator: afterJoins.orchestratorCpu - before.orchestratorCpu,
      orchestratorMain: afterJoins.orchestratorMainCpu - before.orchestratorMainCpu,
      nats: afterJoins.natsCpu - before.natsCpu,
    };
    if (settleSeconds > 0) await sleep(settleSeconds * 1000);
    const after = { orchestratorRss: rssMB(orchestratorPid), natsRss: rssMB(natsPid) };
    const refusedByCode: Record<string, number> = {};
    for (const j of joiners)
      for (const [code, n] of Object.entries(j.last.refusedByCode))
        refusedByCode[code] = (refusedByCode[code] ?? 0) + n;
    const failed = joiners.reduce((sum, j) => sum + j.last.failed, 0);
    const orchestratorMsPerJoin = cpu.orchestrator / nodes;
    const natsMsPerJoin = cpu.nats / nodes;
    // The orchestrator's work is on one thread: 100,000 joins need at least this long even with every
    // client elsewhere; it and nats-server share two cores, which bounds them together as well.
    const projectedS = Math.max(
      (TARGET_NODES * orchestratorMsPerJoin) / 1000,
      (TARGET_NODES * (orchestratorMsPerJoin + natsMsPerJoin)) / 2000,
    );
    const note = `load average ${loadBefore} before, ${loadAfter} after`;
    const figures: BenchFigure[] = [
      {
        name: "registration storm: joins/s",
        value: nodes / joinedS,
        unit: "/s",
        target: { on: "value", min: TARGET_NODES / TARGET_SECONDS },
        note: `${nodes} joined in ${joinedS.toFixed(1)} s; ${note}`,
      },
      { name: "registration storm: all APPROVED and listed", value: listedS, unit: "s", note: `${nodes} nodes` },
      {
        name: "orchestrator CPU per join",
        value: orchestratorMsPerJoin,
        unit: "ms",
        note: `${(cpu.orchestrator / 1000).toFixed(1)} CPU-s for ${nodes} joins (${((afterJoins.orchestratorSplit.system - before.orchestratorSplit.system) / 1000).toFixed(1)} s of it in the kernel)`,
      },
      {
        name: "orchestrator main-thread CPU per join",
        value: cpu.orchestratorMain / nodes,
        unit: "ms",
        target: { on: "value", max: (TARGET_SECONDS * 1000) / TARGET_NODES },
        note: "the event loop's thread alone (the rest: GC helpers, libuv's pool); 100,000 joins in 20 s allow 0.2 ms",
      },
      {
        name: "nats-server CPU per join",
        value: natsMsPerJoin,
        unit: "ms",
        note: `${(cpu.nats / 1000).toFixed(1)} CPU-s (two logins and one request per join)`,
      },
      {
        name: "registration storm, 100,000 nodes: projected from CPU per join",
        value: projectedS,
        unit: "s",
        target: { on: "value", max: TARGET_SECONDS },
        note: "at least max(orchestrator CPU ÷ 1 core, (orchestrator + nats-server CPU) ÷ 2 cores), clients elsewhere",
      },
      {
        name: "orchestrator RSS after the storm",
        value: after.orchestratorRss,
        unit: "MB",
        note: `${before.orchestratorRss} MB before`,
      },
      {
        name: "nats-server RSS after the storm",
        value: after.natsRss,
        unit: "MB",
        note: `${before.natsRss} MB before${hold ? `; ${nodes} connections held` : ""}`,
      },
      {
        name: "join attempts refused or failed (retried)",
        value: failed + Object.values(refusedByCode).reduce((a, b) => a + b, 0),
        unit: "",
        note: JSON.stringify({
          failed,
          refusedByCode,
          errors: [...new Set(joiners.flatMap((j) => j.last.errors))].slice(0, 5),
        }),
      },
    ];
    if (hold) {
      figures.push({
        name: "nats-server RSS per held connection",
        value: ((after.natsRss - before.natsRss) * 1024) / nodes,
        unit: "KB",
      });
      figures.push({
        name: "orchestrator RSS per node",
        value: ((after.orchestratorRss - before.orchestratorRss) * 1024) / nodes,
        unit: "KB",
      });
    }
    return { figures, parameters: { nodes, clients, concurrency, hold, settleSeconds } };
  } finally {
    for (const j of joiners) if (!j.exited) j.child.kill("SIGTERM");
    await Promise.all(joiners.map((j) => (j.exited ? undefined : new Promise((r) => j.child.once("exit", r)))));
    await orchestrator.stop();
  }
}

await runStandalone(import.meta.url, run, [
  "fleet-storm.nodes",
  "fleet-storm.clients",
  "fleet-storm.concurrency",
  "fleet-storm.hold",
]);
