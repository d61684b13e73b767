import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RecordedEvent } from "../../src/events/store/event-store.ts";
import { tempDir } from "../support/fixtures.ts";
import { LocalServe } from "../support/local-serve.ts";
import { runShoal, ShoalProcess, waitFor } from "../support/shoal-process.ts";
import { dataIds, openSse, type SseClient } from "../support/sse-client.ts";
import { quietMoment, storedEvents } from "../support/stored-events.ts";
import { ALICE, aliceAndBob, apiUser, BOB, submitQueuedJob, usersApi, type Body } from "../support/users-api.ts";

/**
 * The auditors' and subscribers' story with real processes: a `shoal serve` with API users alice and bob, a `shoal
 * sim` fleet joining under manual approval. alice cordons, labels and submits; bob approves, rejects and stops. The
 * feed filtered by actor, the cluster as of a recorded moment, the diff between two moments, an SSE subscriber that
 * resumes across a kill -9, and the hash chain verified on the store file, then broken by an edit while stopped.
 */
const AUDITOR = apiUser("audit", "audit password", ["read:node", "read:job", "read:history"], "auditor");
const NODES = "/api/v1/orchestrator/nodes";
const JOBS = "/api/v1/orchestrator/jobs";
const FEED = "/api/v1/orchestrator/events";
/** The categories the feed and the stream carry by default. */
const ENTITY_CATEGORIES = ["node", "job", "execution"];

const dataDir = tempDir("shoal-audit-story-");
const file = join(dataDir, "shoal.db");
const serve = new LocalServe(dataDir, [
  "Orchestrator.NodeManager.ManualApproval=true",
  `API.Auth.Users=${JSON.stringify([...aliceAndBob(), AUDITOR.entry])}`,
  // The jobs wait in the queue (no node has zone=nowhere) for as long as the story lasts.
  "JobDefaults.Batch.Task.Timeouts.QueueTimeout=1h",
]);
let sim: ShoalProcess | undefined;
const clients: SseClient[] = [];

const url = serve.url;
const api = usersApi(url, AUDITOR.authorization);
const { call, act } = api;
const node = (id: string) => `${NODES}/${id}`;
const categoryOf = (e: RecordedEvent) => e.stream.slice(0, e.stream.indexOf("-"));
const actorOf = (e: RecordedEvent) => e.metadata.actor as { type: string; id: string };
const auditFlags = () => ["--api-port", String(serve.apiPort), "--username", "audit", "--password", "audit password"];

const moment = () => quietMoment(dataDir);

/**
 * A node's NodeState less its live fields: the last heartbeat and the available capacity this process heard are not
 * in the log (heartbeats and resource reports are not events). A job list holds nothing live.
 */
function withoutLive(body: Body): Body {
  const strip = (n: Body) => {
    const { LastHeartbeat: _, ...connection } = n.ConnectionState as Body;
    // The orchestrator's own node (a requester) has no compute info.
    if (n.Info.ComputeNodeInfo === undefined) return { ...n, ConnectionState: connection };
    const { AvailableCapacity: __, ...compute } = n.Info.ComputeNodeInfo as Body;
    return { ...n, ConnectionState: connection, Info: { ...n.Info, ComputeNodeInfo: compute } };
  };
  if (Array.isArray(body.Nodes)) return { ...body, Nodes: (body.Nodes as Body[]).map(strip) };
  return body;
}

let simIds: string[] = [];
let early = "";
let later = "";
let t1 = "";
let p1 = 0;
let t2 = "";
let p2 = 0;
const atT1 = new Map<string, Body>();
let subscriber: SseClient;
let beforeKill: number[] = [];

beforeAll(async () => {
  await serve.start();
  // The subscriber follows from the very first event, before any node joins.
  subscriber = await openSse(`${url()}/api/v1/orchestrator/events/stream?after=0`, {
    headers: { authorization: AUDITOR.authorization },
  });
  clients.push(subscriber);
  expect(subscriber.status).toBe(200);
  sim = ShoalProcess.start([
    "sim",
    "--nodes",
    "4",
    "--id-prefix",
    "story",
    "--orchestrator",
    serve.natsUrl,
    "--token-file",
    serve.joinTokenFile,
    "--heartbeat-interval",
    "1s",
    "--jitter",
    "200ms",
  ]);
  await waitFor(
    async () => {
      const nodes = (await call("GET", NODES)).body.Nodes as Body[] | undefined;
      const joined = (nodes ?? []).filter((n) => (n.Info.NodeID as string).startsWith("story-"));
      simIds = joined.map((n) => n.Info.NodeID as string).sort();
      return joined.length === 4 && joined.every((n) => n.Health === "HEALTHY");
    },
    60_000,
    () => `4 sim nodes HEALTHY; sim stderr: ${sim?.stderr.slice(-2000)}`,
  );
}, 90_000);

afterAll(async () => {
  for (const c of clients) c.close();
  if (sim && sim.child.exitCode === null && sim.child.signalCode === null) await sim.kill("SIGTERM");
  await serve.stop();
});

describe("the audit story", { timeout: 120_000 }, () => {
  it("alice and bob act; the cluster is recorded at t1 and the changes up to t2", async () => {
    const [a, b, c, d] = simIds as [string, string, string, string];
    // Before t1.
    await act(BOB, node(a), { Action: "approve", Message: "racked" });
    await act(BOB, node(b), { Action: "approve", Message: "checked" });
    await act(ALICE, node(a), { Action: "cordon", Message: "disk replacement" });
    await act(ALICE, node(b), { Action: "label", Labels: { zone: "a" } });
    early = await submitQueuedJob(api, ALICE, "early");
    ({ time: t1, position: p1 } = await moment());
    for (const path of [NODES, JOBS]) {
      const res = await call("GET", path);
      expect(res.status, res.text).toBe(200);
      atT1.set(path, res.body);
    }

    // Between t1 and t2.
    await act(BOB, node(c), { Action: "approve", Message: "spare" });
    await act(ALICE, node(c), { Action: "label", Labels: { zone: "b" } });
    await act(BOB, node(d), { Action: "reject", Message: "unknown hardware" });
    await act(ALICE, node(b), { Action: "cordon", Message: "fan noise" });
    await act(BOB, `${JOBS}/${early}?reason=${encodeURIComponent("not needed")}`, undefined, "DELETE");
    later = await submitQueuedJob(api, ALICE, "later");
    ({ time: t2, position: p2 } = await moment());

    // After t2.
    await act(ALICE, node(a), { Action: "uncordon", Message: "disk replaced" });
    await act(BOB, `${JOBS}/${later}?reason=${encodeURIComponent("superseded")}`, undefined, "DELETE");
  });

  it("the feed filtered by actor=operator:alice holds exactly alice's stored events", async () => {
    const res = await call("GET", `${FEED}?actor=operator:alice&limit=1000`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.NextToken).toBe("");
    const alices = (await storedEvents(dataDir)).filter(
      (e) => actorOf(e).type === "operator" && actorOf(e).id === "alice",
    );
    expect((res.body.Items as RecordedEvent[]).map((e) => e.position)).toEqual(alices.map((e) => e.position));
    expect((res.body.Items as RecordedEvent[]).map((e) => [e.type, e.stream])).toEqual([
      ["NodeCordoned", `node-${simIds[0]}`],
      ["NodeLabelsSet", `node-${simIds[1]}`],
      ["JobSubmitted", `job-${early}`],
      ["NodeLabelsSet", `node-${simIds[2]}`],
      ["NodeCordoned", `node-${simIds[1]}`],
      ["JobSubmitted", `job-${later}`],
      ["NodeUncordoned", `node-${simIds[0]}`],
    ]);
  });

  it("as_of=t1 answers the node and job lists recorded at t1", async () => {
    for (const [path, then] of atT1) {
      const now = await call("GET", path);
      expect(withoutLive(now.body), `${path} now`).not.toEqual(withoutLive(then));
      const asOf = await call("GET", `${path}?as_of=${encodeURIComponent(t1)}`);
      expect(asOf.status, asOf.text).toBe(200);
      expect(withoutLive(asOf.body), `${path} as of ${t1}`).toEqual(withoutLive(then));
    }
  });

  it("shoal audit diff t1 t2 --output json names every change between them, and none outside", async () => {
    const res = await runShoal(["audit", "diff", t1, t2, "--output", "json", ...auditFlags()]);
    expect(res.code, res.stderr).toBe(0);
    const diff = JSON.parse(res.stdout) as Body;
    expect(diff.From).toEqual({ Position: p1, Time: t1 });
    expect(diff.To).toEqual({ Position: p2, Time: t2 });
    const brief = (changes: Body[]) => changes.map((ch) => [ch.Entity, ch.Change, ch.By, ch.Reason]);
    const [, b, c, d] = simIds;
    expect(brief(diff.Nodes)).toEqual([
      [c, "approved", "operator:bob", "spare"],
      [c, "labels", "operator:alice", ""],
      [d, "rejected", "operator:bob", "unknown hardware"],
      [b, "cordoned", "operator:alice", "fan noise"],
    ]);
    expect(brief(diff.Jobs)).toEqual([
      [early, "stopped", "operator:bob", "not needed"],
      [later, "submitted", "operator:alice", expect.any(String)],
    ]);
    // Every operator act stored in the window is named, at its position; none from before t1 or after t2. A rejection
    // revokes the node's credential in the same act: the rejected change names it.
    const acts = (await storedEvents(dataDir)).filter(
      (e) =>
        actorOf(e).type === "operator" && e.type !== "NodeCredentialRevoked" && e.position > p1 && e.position <= p2,
    );
    const named = [...diff.Nodes, ...diff.Jobs].map((ch: Body) => ch.Position as number).sort((x, y) => x - y);
    expect(named).toEqual(acts.map((e) => e.position));
  });

  it("after a kill -9, an SSE subscriber resuming with its Last-Event-ID has every event once", async () => {
    const stored = async () =>
      (await storedEvents(dataDir)).filter((e) => ENTITY_CATEGORIES.includes(categoryOf(e))).map((e) => e.position);
    const upToNow = (await stored()).at(-1)!;
    // alice keeps labelling while the orchestrator dies: the kill lands mid-stream, acts in flight.
    let labelling = true;
    let accepted = 0;
    const labels = (async () => {
      for (let round = 0; labelling; round++) {
        const res = await call("PUT", node(simIds[0]!), ALICE, {
          Action: "label",
          Labels: { round: String(round) },
        }).catch(() => undefined);
        if (res?.status === 200) accepted++;
        else await new Promise((r) => setTimeout(r, 100));
      }
    })();
    await subscriber.until((m) => dataIds(m).filter((p) => p > upToNow).length >= 3);
    await serve.kill("SIGKILL");
    await subscriber.ended;
    beforeKill = dataIds(subscriber.messages);
    const acceptedBeforeKill = accepted;

    await serve.start();
    const resumed = await openSse(`${url()}/api/v1/orchestrator/events/stream?after=0`, {
      headers: { authorization: AUDITOR.authorization, "last-event-id": String(beforeKill.at(-1)) },
    });
    clients.push(resumed);
    expect(resumed.status).toBe(200);
    // More happens after the restart, which the subscriber must also see.
    await waitFor(
      () => accepted >= acceptedBeforeKill + 3,
      30_000,
      () => `alice's labels after the restart (${accepted - acceptedBeforeKill} accepted)`,
    );
    labelling = false;
    await labels;
    await act(ALICE, node(simIds[1]!), { Action: "uncordon", Message: "fan replaced" });
    const all = await stored();
    await resumed.until((m) => dataIds(m).includes(all.at(-1)!));
    const received = [...beforeKill, ...dataIds(resumed.messages)];
    expect(received.slice(0, all.length)).toEqual(all);
    expect(new Set(received).size).toBe(received.length);
  });

  it("shoal audit verify --store passes, and after one row is edited while stopped fails at its position", async () => {
    const holds = await runShoal(["audit", "verify", "--store", file]);
    expect(holds.code, holds.stderr).toBe(0);
    expect(holds.stdout).toMatch(/^the chain holds: \d+ events checked through position \d+/);

    sim!.child.kill("SIGTERM");
    await sim!.exited;
    await serve.kill("SIGTERM");
    const db = new Database(file);
    const row = db
      .prepare("SELECT position, stream, revision FROM events WHERE type = 'NodeRejected' AND stream = ?")
      .get(`node-${simIds[3]}`) as { position: number; stream: string; revision: number };
    db.prepare("UPDATE events SET data = json_set(data, '$.Tampered', 1) WHERE position = ?").run(row.position);
    db.close();

    const broken = await runShoal(["audit", "verify", "--store", file]);
    expect(broken.code, broken.stderr).toBe(1);
    expect(broken.stdout).toContain(`BROKEN at position ${row.position} (${row.stream}@${row.revision}): edited`);
    expect(broken.stdout).toContain(`the chain held through position ${row.position - 1}`);
  });
});
