/**
 * The soak (`npm run soak`): Shoal at a scale the tests do not reach, with its faults on the way.
 *
 * A real `shoal serve` (bin/shoal, its embedded nats-server, SQLite, JSON logs) takes a fleet of
 * `shoal sim --run-work` virtual nodes (real joins and logins, heartbeats, work run in memory) and
 * real `shoal compute` agents running Docker, while jobs of every type (batch, ops, service,
 * daemon) arrive steadily over REST: a few for the agents (labelled so that only they match), and
 * hundreds for the virtual nodes (thousands of executions), so that one orchestrator life stores
 * some ten thousand events, a quarter to a third of them workflow steps, and the SHOAL_EVENTS
 * publisher's queue is compacted with unpublished steps at its head (what once crashed it). A third
 * of the way through the job phase the orchestrator is killed with `kill -9` and started again;
 * two thirds through it is stopped with SIGTERM and started again. At the end the soak stops the
 * services and daemons, waits for every job to end, stops the fleet and compares what two
 * downstream readers saw: a durable JetStream consumer on SHOAL_EVENTS (the events-reader
 * credentials) and the SQLite store.
 *
 * It fails, saying why, when an event is missing, duplicated or out of order downstream, a node is
 * recorded UNHEALTHY (or UNKNOWN) while its agent or sim ran, a job is left without an end state
 * (services and daemons must be Stopped), the orchestrator logs an error the allow-list
 * (unexpected-errors.ts) does not explain, or a process of the soak dies on its own. It prints its
 * figures (events/s, jobs/s, restart times) and asserts none of them.
 *
 *   npm run soak [-- --nodes 100 --duration 30s]   (soak-settings.ts; SOAK_* variables work too)
 */
import { mkdtempSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../../bench/support/free-port.ts";
import { adminApiKeyPath } from "../../src/security/admin-api-key.ts";
import { dockerTestImage } from "../support/docker-test-image.ts";
import { removeContainersOf } from "../support/node-containers.ts";
import { compareEventFeeds, PUBLISHED_CATEGORIES } from "./event-feed-check.ts";
import { EventsReader } from "./events-reader.ts";
import { FleetProcess } from "./fleet-process.ts";
import { isLongRunning, isTerminal, jobEnds, storedJobs } from "./job-ends-check.ts";
import { AGENT_LABEL, dockerJob, JobStream, simJob } from "./job-stream.ts";
import { nodesBlamedWhileRunning } from "./node-health-check.ts";
import { SOAK_HELP, soakSettings } from "./soak-settings.ts";
import { SoakOrchestrator } from "./soak-orchestrator.ts";
import { storeEvents, type StoreEvent } from "./store-events.ts";
import { unexpectedErrors } from "./unexpected-errors.ts";

const SIM_PREFIX = "soak-sim";
const AGENT_PREFIX = "soak-agent";
const PROGRESS_MS = 10_000;

interface Check {
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string;
}

const t0 = performance.now();
const seconds = (ms: number) => Math.round(ms / 100) / 10;
const log = (line: string) =>
  console.log(
    `[soak ${seconds(performance.now() - t0)
      .toFixed(1)
      .padStart(6)} s] ${line}`,
  );
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const categoryOfStream = (stream: string) => stream.slice(0, Math.max(0, stream.indexOf("-")));
const publishable = (events: readonly StoreEvent[]) =>
  events.filter((e) => PUBLISHED_CATEGORIES.has(categoryOfStream(e.stream)));
const sample = <T>(items: readonly T[], n = 5) => JSON.stringify(items.slice(0, n));

async function until(
  what: string,
  timeoutMs: number,
  check: () => boolean | Promise<boolean>,
  everyMs = 250,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${seconds(timeoutMs)} s waiting for ${what}`);
    await sleep(everyMs);
  }
}

const parsed = soakSettings(process.argv.slice(2), process.env);
if (parsed === "help") {
  console.log(SOAK_HELP);
  process.exit(0);
}
const settings = parsed;
const root = mkdtempSync(join(tmpdir(), "shoal-soak-"));
const dataDir = join(root, "orchestrator");
mkdirSync(dataDir);
const apiPort = await freePort();
const natsPort = await freePort();
const apiUrl = `http://127.0.0.1:${apiPort}`;
const natsUrl = `nats://127.0.0.1:${natsPort}`;
const agentIds = Array.from({ length: settings.agents }, (_, i) => `${AGENT_PREFIX}-${i + 1}`);
const orchestrator = new SoakOrchestrator(
  dataDir,
  {
    "API.Host": "127.0.0.1",
    "API.Port": apiPort,
    "Orchestrator.Host": "127.0.0.1",
    "Orchestrator.Port": natsPort,
    // The fleet joins at the sim's own rate; the default admission rate would stretch its join over minutes.
    "Orchestrator.NodeManager.MaxRegistrationsPerSecond": 0,
    "Orchestrator.NodeManager.DisconnectTimeout": `${settings.disconnectTimeoutMs}ms`,
    "Orchestrator.NodeManager.UnknownTimeout": `${Math.max(settings.disconnectTimeoutMs * 4, 60_000)}ms`,
    "Logging.Level": "warn",
  },
  log,
);
const fleet: FleetProcess[] = [];
let reader: EventsReader | undefined;
let jobs: JobStream[] = [];

function killEverythingNow(): void {
  for (const p of fleet) p.killNow();
  orchestrator.killNow();
}
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    log(`${signal}: stopping every process the soak started`);
    killEverythingNow();
    void removeContainersOf(...agentIds).finally(() => {
      if (!settings.keep) rmSync(root, { recursive: true, force: true });
      process.exit(130);
    });
  });
}

const figures: Record<string, unknown> = {};
const checks: Check[] = [];
let fatal: Error | undefined;

try {
  log(
    `${settings.simNodes} sim nodes, ${settings.agents} Docker agents, Docker jobs at ${settings.jobsPerSecond}/s and ` +
      `sim jobs at ${settings.simNodes > 0 ? settings.simJobsPerSecond : 0}/s for ${seconds(settings.jobPhaseMs)} s; ` +
      `DisconnectTimeout ${seconds(settings.disconnectTimeoutMs)} s; in ${root}`,
  );
  const image = await dockerTestImage();
  const first = await orchestrator.start(60_000);
  figures.firstStartReadyMs = Math.round(first.readyMs);
  log(`shoal serve ready in ${Math.round(first.readyMs)} ms (API ${apiUrl}, NATS ${natsUrl})`);
  const apiKey = () => readFileSync(adminApiKeyPath(dataDir), "utf8").trim();
  reader = await EventsReader.start(natsUrl, join(dataDir, "credentials", "nats-events-reader.creds"));
  const tokenFile = join(dataDir, "credentials", "join-token");
  const token = readFileSync(tokenFile, "utf8").trim();

  const joinStarted = performance.now();
  for (const nodeId of agentIds) {
    const agentDir = join(root, nodeId);
    mkdirSync(agentDir);
    const label = `${AGENT_LABEL.key}=${AGENT_LABEL.value}`;
    fleet.push(FleetProcess.agent({ nodeId, dataDir: agentDir, natsUrl, token, label }));
  }
  const sim =
    settings.simNodes > 0
      ? FleetProcess.sim({
          nodes: settings.simNodes,
          prefix: SIM_PREFIX,
          natsUrl,
          tokenFile,
          joinRate: settings.simJoinRatePerSecond,
          heartbeatMs: settings.simHeartbeatMs,
          runMs: settings.simRunMs,
        })
      : undefined;
  if (sim) fleet.push(sim);
  const fleetBroken = () => fleet.find((p) => p.exitedOnItsOwn !== undefined)?.exitedOnItsOwn;
  const agentApproved = async (nodeId: string) => {
    const res = await fetch(`${apiUrl}/api/v1/orchestrator/nodes/${nodeId}`, {
      headers: { authorization: `Bearer ${apiKey()}` },
    });
    if (res.status !== 200) return false;
    const body = (await res.json()) as { Node?: { Membership?: string; Connection?: string } };
    return body.Node?.Membership === "APPROVED" && body.Node.Connection === "CONNECTED";
  };
  let lastJoinLog = performance.now();
  await until("the fleet to join", settings.joinTimeoutMs, async () => {
    const broken = fleetBroken();
    if (broken) throw new Error(broken);
    const p = sim?.progress;
    if (performance.now() - lastJoinLog > PROGRESS_MS && p) {
      lastJoinLog = performance.now();
      log(`joining: ${p.registered}/${p.nodes} sim nodes registered, ${p.refused} refused, ${p.failed} undelivered`);
    }
    if (sim && (p === undefined || p.registered < settings.simNodes || p.joining > 0)) return false;
    return (await Promise.all(agentIds.map(agentApproved))).every(Boolean);
  });
  const joinS = (performance.now() - joinStarted) / 1000;
  figures.fleetJoinSeconds = Math.round(joinS * 10) / 10;
  figures.fleetJoinsPerSecond = Math.round((settings.simNodes + settings.agents) / joinS);
  log(`fleet up in ${joinS.toFixed(1)} s: ${settings.simNodes} sim nodes, ${settings.agents} agents APPROVED`);

  // The job phase: a steady stream, a kill -9 at a third, a SIGTERM restart at two thirds.
  const stream = new JobStream(apiUrl, apiKey, (n) => dockerJob(image, n));
  const simStream = sim ? new JobStream(apiUrl, apiKey, simJob) : undefined;
  jobs = simStream ? [stream, simStream] : [stream];
  const submitted = () => jobs.reduce((sum, j) => sum + j.submitted, 0);
  const accepted = () => Object.assign({}, ...jobs.map((j) => j.counts.accepted)) as Record<string, number>;
  const phaseStarted = performance.now();
  const eventsBefore = publishable(storeEvents(dataDir)).length;
  stream.start(settings.jobsPerSecond);
  simStream?.start(settings.simJobsPerSecond);
  const progress = setInterval(() => {
    const p = sim?.progress;
    const beating = p ? `${p.heartbeating}/${p.nodes} heartbeating (${p.heartbeatsPerSecond}/s)` : "-";
    log(
      `${submitted()} jobs submitted (${JSON.stringify(accepted())} accepted); reader at position ` +
        `${reader?.lastPosition}; sim ${beating}`,
    );
  }, PROGRESS_MS);
  try {
    await sleep(settings.jobPhaseMs / 3);
    log("kill -9 of shoal serve");
    const killedAt = performance.now();
    await orchestrator.kill9();
    const second = await orchestrator.start(60_000);
    figures.killRestartReadyMs = Math.round(second.readyMs);
    figures.killDowntimeMs = Math.round(performance.now() - killedAt);
    log(`shoal serve ready again in ${Math.round(second.readyMs)} ms (down ${figures.killDowntimeMs} ms)`);
    await sleep(Math.max(0, phaseStarted + (2 * settings.jobPhaseMs) / 3 - performance.now()));
    log("SIGTERM to shoal serve");
    const termAt = performance.now();
    figures.sigtermStopMs = Math.round(await orchestrator.terminate());
    const third = await orchestrator.start(60_000);
    figures.sigtermRestartReadyMs = Math.round(third.readyMs);
    figures.sigtermDowntimeMs = Math.round(performance.now() - termAt);
    const ready = Math.round(third.readyMs);
    log(`stopped in ${figures.sigtermStopMs} ms, ready again in ${ready} ms (down ${figures.sigtermDowntimeMs} ms)`);
    await sleep(Math.max(0, phaseStarted + settings.jobPhaseMs - performance.now()));
  } finally {
    clearInterval(progress);
    await Promise.all(jobs.map((j) => j.stop()));
  }
  const phaseS = (performance.now() - phaseStarted) / 1000;
  figures.jobsSubmitted = submitted();
  figures.jobsAccepted = accepted();
  figures.submissionsNotAccepted = Object.assign({}, ...jobs.map((j) => j.counts.outcomes)) as Record<string, number>;
  figures.jobsSubmittedPerSecond = Math.round((submitted() / phaseS) * 100) / 100;
  const phaseEvents = publishable(storeEvents(dataDir)).length - eventsBefore;
  figures.eventsPerSecondDuringJobs = Math.round(phaseEvents / phaseS);
  log(`job phase over: ${submitted()} submitted in ${phaseS.toFixed(1)} s; ${phaseEvents} cluster events stored`);

  // The end: services and daemons stopped, every job given time to end.
  const endStarted = performance.now();
  // Each service and daemon is stopped once; only a stop that got no 200 is asked again. A job
  // whose stop was accepted and that does not end Stopped is the orchestrator's fault, shown below.
  const stopAccepted = new Set<string>();
  let lastEndLog = performance.now();
  await until(
    "every job to end",
    settings.settleMs,
    async () => {
      const open = storedJobs(storeEvents(dataDir)).filter((j) => !isTerminal(j));
      for (const job of open.filter((j) => isLongRunning(j) && !stopAccepted.has(j.jobId))) {
        const res = await fetch(`${apiUrl}/api/v1/orchestrator/jobs/${job.jobId}?reason=soak%20over`, {
          method: "DELETE",
          headers: { authorization: `Bearer ${apiKey()}` },
        }).catch((e: unknown) => ({ status: 0, text: () => Promise.resolve(String(e)) }));
        if (res.status === 200) stopAccepted.add(job.jobId);
        else log(`stop of job ${job.jobId}: ${res.status} ${(await res.text()).slice(0, 120)}`);
      }
      if (performance.now() - lastEndLog > PROGRESS_MS) {
        lastEndLog = performance.now();
        log(`waiting for ${open.length} jobs to end: ${sample(open, 3)}`);
      }
      return open.length === 0;
    },
    // Each look reads the whole store (tens of thousands of events): once a second is often enough.
    1000,
  ).catch((e: unknown) => log(`${(e as Error).message}; checked below`));
  figures.jobsEndSeconds = seconds(performance.now() - endStarted);

  // The fleet stops: from here on a node's silence is its own.
  const fleetStoppedAt = Date.now();
  const fleetProblems = fleet.map((p) => p.exitedOnItsOwn).filter((s): s is string => s !== undefined);
  const simLast = sim?.progress;
  figures.simHeartbeatsPerSecond = simLast?.heartbeatsPerSecond;
  figures.simRefusedByCode = simLast?.refusedByCode;
  await Promise.all(fleet.map((p) => p.stop()));
  log("fleet stopped");

  // The JetStream reader catches up with the store's head, then both are compared up to it. A
  // message a fetch lost on its way is JetStream's to deliver again (after the consumer's ack wait):
  // the wait is for every event, not only for the last one.
  const catchUpStarted = performance.now();
  const expected = publishable(storeEvents(dataDir));
  const head = Math.max(0, ...expected.map((e) => e.position));
  const caughtUp = () => expected.every((e) => reader?.has(e.id));
  const what = `the JetStream reader to receive every event up to store position ${head}`;
  await until(what, settings.settleMs, caughtUp).catch((e: unknown) => log(`${(e as Error).message}; checked below`));
  figures.readerCatchUpMs = Math.round(performance.now() - catchUpStarted);
  const finalReader = reader;
  reader = undefined;
  const jetStream = await finalReader.streamState().catch((e: unknown) => `unknown (${e})`);
  const unreceived = finalReader.unreceivedSequences();
  await finalReader.stop();
  figures.finalStopMs = Math.round(await orchestrator.terminate());
  const store = storeEvents(dataDir);
  const firstTime = Date.parse(store[0]?.time ?? "");
  const lastTime = Date.parse(store.at(-1)?.time ?? "");
  figures.storedEvents = store.length;
  figures.clusterEvents = publishable(store).length;
  figures.eventsPerSecondOverall = Math.round(publishable(store).length / Math.max(1, (lastTime - firstTime) / 1000));
  // What each start of the orchestrator stored (by event time, from one start's ready to the next's):
  // the publisher's queue is per life, and only a long life fills and compacts it.
  figures.eventsPerLife = orchestrator.incarnations.map((i) => {
    const next = orchestrator.incarnations[i.run]?.readyAt ?? Infinity;
    const from = i.run === 1 ? -Infinity : i.readyAt;
    const its = store.filter((e) => Date.parse(e.time) >= from && Date.parse(e.time) < next);
    return { stored: its.length, published: publishable(its).length };
  });
  figures.readerRedeliveries = finalReader.redeliveries;
  figures.readerFetchErrors = finalReader.fetchErrors;

  const feed = compareEventFeeds(store, finalReader.received, head);
  checks.push({
    name: "SHOAL_EVENTS: every stored event once, in store order",
    ok: feed.stored > 0 && [feed.missing, feed.duplicated, feed.outOfOrder, feed.unknown].every((f) => f.length === 0),
    detail:
      `${feed.stored} stored up to position ${head}, ${feed.read} read; ` +
      `${feed.missing.length} missing ${sample(feed.missing, 3)}, ` +
      `${feed.duplicated.length} duplicated ${sample(feed.duplicated, 3)}, ${feed.outOfOrder.length} out of order ` +
      `${sample(feed.outOfOrder, 2)}, ${feed.unknown.length} not as stored ${sample(feed.unknown, 3)}; ` +
      `JetStream holds ${JSON.stringify(jetStream)}, the consumer never got sequences ${sample(unreceived, 10)}`,
  });

  const ours = (nodeId: string) => nodeId.startsWith(`${SIM_PREFIX}-`) || agentIds.includes(nodeId);
  const blamed = nodesBlamedWhileRunning(store, ours, fleetStoppedAt);
  // Which start of the orchestrator each blamed event followed, and how long after it was ready.
  const byRun = orchestrator.incarnations.map((i) => {
    const next = orchestrator.incarnations[i.run]?.readyAt ?? Infinity;
    const its = blamed.filter((b) => Date.parse(b.time) >= i.readyAt && Date.parse(b.time) < next);
    const after = its.map((b) => (Date.parse(b.time) - i.readyAt) / 1000);
    const span = its.length === 0 ? "" : ` at +${Math.min(...after).toFixed(1)}…+${Math.max(...after).toFixed(1)} s`;
    const cause = i.run === 1 ? "first start" : `after ${orchestrator.incarnations[i.run - 2]?.ended}`;
    return `${its.length} after start ${i.run} (${cause})${span}`;
  });
  checks.push({
    name: "no node recorded UNHEALTHY or UNKNOWN while its agent or sim ran",
    ok: blamed.length === 0,
    detail:
      `${blamed.length} health events on ${new Set(blamed.map((b) => b.nodeId)).size} nodes ` +
      `(${blamed.filter((b) => b.nodeId.startsWith(AGENT_PREFIX)).length} on agents): ${byRun.join("; ")}; ` +
      `first ${sample(blamed, 3)}`,
  });

  const ends = jobEnds(storedJobs(store));
  figures.jobsByTypeAndEnd = ends.counts;
  const ended = Object.entries(ends.counts)
    .filter(([k]) => /(Completed|Failed|Stopped)$/.test(k))
    .reduce((sum, [, n]) => sum + n, 0);
  figures.jobsEndedPerSecond = Math.round((ended / phaseS) * 100) / 100;
  checks.push({
    name: "every job ended (services and daemons Stopped)",
    ok: ends.unended.length === 0 && ends.longRunningNotStopped.length === 0,
    detail:
      `${ends.unended.length} without an end state ${sample(ends.unended)}; ` +
      `${ends.longRunningNotStopped.length} services/daemons ` +
      `ended otherwise than Stopped ${sample(ends.longRunningNotStopped)}; ${JSON.stringify(ends.counts)}`,
  });
  const wanted = (sim ? ["docker", "sim"] : ["docker"]).flatMap((on) =>
    ["batch Completed", "ops Completed", "service Stopped", "daemon Stopped"].map((k) => `${on} ${k}`),
  );
  checks.push({
    name: "jobs of every type ran",
    ok: wanted.every((k) => (ends.counts[k] ?? 0) > 0),
    detail: wanted.map((k) => `${k}: ${ends.counts[k] ?? 0}`).join(", "),
  });

  const unexpected = unexpectedErrors(orchestrator.errorLines);
  figures.orchestratorErrorLines = orchestrator.errorLines.length;
  figures.orchestratorWarnings = Object.fromEntries([...orchestrator.warnings].sort((a, b) => b[1] - a[1]).slice(0, 8));
  checks.push({
    name: "no orchestrator error line outside the allow-list",
    ok: unexpected.length === 0,
    detail:
      `${unexpected.length} of ${orchestrator.errorLines.length} error lines unexpected; first: ` +
      unexpected
        .slice(0, 3)
        .map((l) => `run ${l.run}: ${l.line.slice(0, 600)}`)
        .join(" | "),
  });
  checks.push({
    name: "every process ran until the soak stopped it",
    ok: fleetProblems.length === 0 && orchestrator.unexpectedExits.length === 0 && (simLast?.gaveUp ?? 0) === 0,
    detail: [...orchestrator.unexpectedExits, ...fleetProblems, `${simLast?.gaveUp ?? 0} sim nodes gave up`].join(", "),
  });
} catch (e) {
  fatal = e as Error;
} finally {
  await Promise.all(jobs.map((j) => j.stop().catch(() => undefined)));
  await reader?.stop().catch(() => undefined);
  await Promise.all(fleet.map((p) => p.stop().catch(() => undefined)));
  await orchestrator.terminate().catch(() => undefined);
  await removeContainersOf(...agentIds).catch((e: unknown) => log(`could not remove the agents' containers: ${e}`));
  if (!settings.keep) rmSync(root, { recursive: true, force: true });
}

figures.totalSeconds = seconds(performance.now() - t0);
console.log("\n=== soak figures (not asserted) ===");
for (const [name, value] of Object.entries(figures)) {
  console.log(`  ${name}: ${typeof value === "object" ? JSON.stringify(value) : value}`);
}
console.log("=== soak checks ===");
for (const c of checks) console.log(`  ${c.ok ? "PASS" : "FAIL"}  ${c.name}\n        ${c.detail}`);
if (fatal) console.log(`  FAIL  the soak could not finish: ${fatal.stack ?? fatal.message}`);
const ok = fatal === undefined && checks.every((c) => c.ok);
const summary = { ok, settings, checks, figures, fatal: fatal?.message ?? null, kept: settings.keep ? root : null };
console.log(`SOAK SUMMARY ${JSON.stringify(summary)}`);
console.log(ok ? "soak passed" : "soak FAILED");
process.exit(ok ? 0 : 1);
