import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect as tcpConnect } from "node:net";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { AckPolicy, connect, credsAuthenticator, type NatsConnection } from "nats";
import { loadOrCreateNodeKey } from "../../src/compute/node-key.ts";
import { encodeNodeEvent } from "../../src/events/catalog/node-event-codec.ts";
import { SqliteEventStore } from "../../src/events/sqlite/sqlite-event-store.ts";
import { categoryOf } from "../../src/events/streams.ts";
import { ComputeClient } from "../../src/transport/compute-client.ts";
import type { ProtocolResponse } from "../../src/transport/messages.ts";
import { jwtLogin } from "../../src/transport/nats-jwt/jwt-login.ts";
import { computeInfo, tempDir } from "../support/fixtures.ts";
import { storedEvents } from "../support/stored-events.ts";
import { freePort } from "../support/nats-server.ts";
import {
  bindReadOnly,
  mountExt4,
  mountTmpfs,
  whyCannotMount,
  whyCannotMountExt4,
  type ScratchFs,
} from "../support/scratch-filesystem.ts";
import { ShoalProcess, waitFor } from "../support/shoal-process.ts";

/**
 * Faults with real `shoal` processes: a second process on a DataDir, bad node ids, and stores on
 * filesystems that really are read-only or full (tmpfs and ext4 images, see
 * scratch-filesystem.ts; those tests skip, saying why, where mount(2) is not permitted).
 */
const cannotMount = whyCannotMount();
const cannotMountExt4 = whyCannotMountExt4();
if (cannotMount) console.warn(`e2e store fault tests skipped: ${cannotMount}`);
if (cannotMountExt4) console.warn(`e2e read-only-while-serving test skipped: ${cannotMountExt4}`);

// Each test starts several processes one after another (about 2-5 s each here, more under
// load), so the default 30 s is too tight for some of them.
const TIMEOUT = { timeout: 180_000 };
/** A node's request timeout (ComputeClient's default): an answer must come within it. */
const PROTOCOL_TIMEOUT_MS = 5000;

// Every process a test starts is tracked, the short-lived ones too: a test body that goes on
// after a timeout must not leave an agent running.
const processes: ShoalProcess[] = [];
const mounted: ScratchFs[] = [];
async function stopAll(): Promise<void> {
  for (const p of processes.splice(0))
    if (p.child.exitCode === null && p.child.signalCode === null) await p.kill("SIGTERM");
  for (const m of mounted.splice(0)) {
    m.free();
    m.unmount();
  }
}
const connections: NatsConnection[] = [];
afterEach(async () => {
  await Promise.allSettled(connections.splice(0).map((nc) => nc.close()));
});
afterEach(stopAll);
afterAll(stopAll);

function start(args: string[]): ShoalProcess {
  const p = ShoalProcess.start(args);
  processes.push(p);
  return p;
}

/** Runs `bin/shoal …` to completion, as runShoal does, but tracked. */
async function runShoal(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const p = start(args);
  const code = await p.exited;
  return { code, stdout: p.stdout, stderr: p.stderr };
}

interface Serve {
  readonly process: ShoalProcess;
  readonly api: string;
  readonly natsPort: number;
  readonly dataDir: string;
}

async function serveArgs(dataDir: string, extra: string[] = []) {
  const apiPort = await freePort();
  const natsPort = await freePort();
  const args = [
    "serve",
    ...["-c", `DataDir=${dataDir}`, "-c", "API.Host=127.0.0.1", "-c", `API.Port=${apiPort}`],
    ...[
      "-c",
      "Orchestrator.Host=127.0.0.1",
      "-c",
      `Orchestrator.Port=${natsPort}`,
      "-c",
      "Orchestrator.NodeManager.ManualApproval=true",
    ],
    ...extra,
  ];
  return { args, api: `http://127.0.0.1:${apiPort}`, natsPort };
}

async function startServe(dataDir: string, extra: string[] = []): Promise<Serve> {
  const { args, api, natsPort } = await serveArgs(dataDir, extra);
  const p = start(args);
  await p.waitForOutput("is running", 60_000);
  return { process: p, api, natsPort, dataDir };
}

/** Node info near its size limit (16 KiB): 60 labels of about 130 bytes, their values told apart by `n`. */
const largeInfo = (nodeId: string, n: number) => {
  const info = computeInfo(nodeId);
  return {
    ...info,
    Labels: {
      ...info.Labels,
      ...Object.fromEntries(
        Array.from({ length: 60 }, (_, i) => [`k${i}-${"a".repeat(55)}`, String(n).padEnd(63, "v")]),
      ),
    },
  };
};

/** What serve generated under its DataDir: the join token, the admin API key. */
const credential = (serve: Serve, name: string) =>
  readFileSync(join(serve.dataDir, "credentials", name), "utf8").trim();

function startCompute(nodeId: string, serve: Serve, dataDir = tempDir()): ShoalProcess {
  return start([
    "compute",
    ...["--node-id", nodeId, "-c", `DataDir=${dataDir}`, "-c", `Compute.Auth.Token=${credential(serve, "join-token")}`],
    ...["-c", `Compute.Orchestrators=nats://127.0.0.1:${serve.natsPort}`, "-c", "Compute.Heartbeat.Interval=1s"],
  ]);
}

async function get(url: string, serve?: Serve) {
  const res = await fetch(
    url,
    serve ? { headers: { authorization: `Bearer ${credential(serve, "api-admin-key")}` } } : {},
  );
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

/** The first line a NATS server sends on connect, before any authentication: proof it is up and answering. */
function natsInfo(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tcpConnect(port, "127.0.0.1");
    let text = "";
    socket.setTimeout(5000, () => socket.destroy(new Error("no INFO within 5s")));
    socket.on("data", (d) => {
      text += d.toString();
      if (text.includes("\r\n")) {
        socket.destroy();
        resolve(text.split("\r\n")[0]!);
      }
    });
    socket.once("error", reject);
  });
}

/** Every file under dir with a hash of its content: "touched nothing" made checkable. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile())
        out[path.slice(dir.length)] = createHash("sha256").update(readFileSync(path)).digest("hex");
    }
  };
  walk(dir);
  return out;
}

async function approveNode1(serve: Serve) {
  const res = await fetch(`${serve.api}/api/v1/orchestrator/nodes/node-1`, {
    method: "PUT",
    headers: { "content-type": "application/json", authorization: `Bearer ${credential(serve, "api-admin-key")}` },
    body: JSON.stringify({ Action: "approve" }),
  });
  return {
    status: res.status,
    retryAfter: res.headers.get("retry-after"),
    body: (await res.json()) as Record<string, any>,
  };
}

const historyOf = async (serve: Serve, id: string) =>
  (await get(`${serve.api}/api/v1/orchestrator/nodes/${id}/history`, serve)).body.Items.map(
    (e: { type: string }) => e.type,
  );

describe("one process per DataDir", TIMEOUT, () => {
  it("refuses a second serve on the same DataDir, naming the first; the first's nats-server and API keep answering", async () => {
    const dataDir = tempDir();
    const first = await startServe(dataDir); // its id generated and kept in DataDir/node-id
    const natsPid = readFileSync(join(dataDir, "nats", "nats-server.pid"), "utf8");
    // What a second serve would rewrite on its way up (the first's own nats-server keeps writing JetStream files).
    const mine = () =>
      ["node-id", "shoal.lock.owner", join("nats", "nats-server.pid")].map((f) =>
        readFileSync(join(dataDir, f), "utf8"),
      );
    const before = mine();

    const { args } = await serveArgs(dataDir);
    const second = await runShoal(args);
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(
      new RegExp(
        `^Error: DataDir ${dataDir} is in use by shoal serve \\(pid ${first.process.child.pid} on .*\\); stop it, or give this process another DataDir\\n$`,
      ),
    );

    expect(readFileSync(join(dataDir, "nats", "nats-server.pid"), "utf8")).toBe(natsPid);
    expect(() => process.kill(Number(natsPid), 0)).not.toThrow();
    expect(mine()).toEqual(before);
    expect(await natsInfo(first.natsPort)).toMatch(/^INFO \{/);
    expect((await get(`${first.api}/api/v1/agent/alive`)).body).toEqual({ Status: "OK" });
    const nodes = await get(`${first.api}/api/v1/orchestrator/nodes`);
    expect(nodes.body.Nodes.map((n: any) => n.Info.NodeID)).toEqual([before[0]!.trim()]);
    expect(first.process.child.exitCode).toBeNull();
  });

  it("refuses a second compute agent on the same DataDir", async () => {
    const dataDir = tempDir();
    const port = await freePort(); // nobody there: the first agent keeps retrying, holding its DataDir
    const args = ["compute", "-c", `DataDir=${dataDir}`, "-c", `Compute.Orchestrators=nats://127.0.0.1:${port}`];
    const first = start(args);
    await waitFor(
      () => existsSync(join(dataDir, "compute", "node-id")),
      60_000,
      () => `the first agent to start; stderr: ${first.stderr}`,
    );
    const nodeId = readFileSync(join(dataDir, "compute", "node-id"), "utf8");
    const second = await runShoal(args);
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(
      new RegExp(`^Error: DataDir ${join(dataDir, "compute")} is in use by shoal compute \\(pid ${first.child.pid} `),
    );
    expect(readFileSync(join(dataDir, "compute", "node-id"), "utf8")).toBe(nodeId);
    expect(first.child.exitCode).toBeNull();
  });
});

describe("bad node ids", TIMEOUT, () => {
  it("refuses -c NodeID=bad.id before anything is written: no DataDir, no store", async () => {
    // Every command reads NodeID through the same config loader (unit-tested for -c, env and YAML).
    const dataDir = join(tempDir(), "data");
    const res = await runShoal(["serve", "-c", `DataDir=${dataDir}`, "-c", "NodeID=bad.id"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(
      `Config error: -c NodeID=bad.id: NodeID: "bad.id" is not a valid node id: a node id is 1-128 letters, digits, '-' or '_', starting with a letter or digit\n`,
    );
    expect(existsSync(dataDir)).toBe(false);
  });

  it("refuses an empty or bad node-id file, keeping it, and writes no store", async () => {
    for (const [command, sub, content] of [
      ["serve", "", ""],
      ["compute", "compute", "bad.id\n"],
    ] as const) {
      const dataDir = tempDir();
      mkdirSync(join(dataDir, sub), { recursive: true });
      const file = join(dataDir, sub, "node-id");
      writeFileSync(file, content);
      const { args } = await serveArgs(dataDir);
      const res = await runShoal(command === "serve" ? args : ["compute", "-c", `DataDir=${dataDir}`]);
      expect(res.code, command).toBe(1);
      expect(res.stderr).toMatch(
        new RegExp(
          `^Error: ${file} holds this node's id, but ".*" is not a valid node id: .*; deleting the file makes a new id`,
        ),
      );
      expect(readFileSync(file, "utf8")).toBe(content);
      // no store, no nats, no owner left behind
      expect(readdirSync(join(dataDir, sub)).sort()).toEqual(["node-id", "shoal.lock"]);
    }
  });
});

describe("stores written by a newer Shoal", TIMEOUT, () => {
  const NEWER =
    "a newer Shoal wrote it, and this one does not read what it wrote. Run that version of Shoal (or a newer one); going back to an older one is not supported";
  const rows = (file: string) => {
    const db = new Database(file, { readonly: true });
    try {
      return {
        events: db.prepare("SELECT * FROM events ORDER BY position").all(),
        version: db.pragma("user_version", { simple: true }),
      };
    } finally {
      db.close();
    }
  };
  /** node-1 as this Shoal writes it, and node-2 registered by a Shoal whose NodeRegistered is at version 2. */
  async function storeWith(file: string, node2Version: number): Promise<void> {
    const store = new SqliteEventStore(file);
    try {
      const metadata = {
        time: "2026-11-28T00:00:00.000Z",
        actor: { type: "node" as const, id: "n" },
        correlationId: "c",
        causationId: "c",
      };
      for (const [i, id] of ["node-1", "node-2"].entries()) {
        const event = encodeNodeEvent(
          {
            type: "NodeRegistered",
            data: { NodeID: id, NodeType: "Compute", Info: computeInfo(id), Membership: "APPROVED", Lifecycle: 1 },
          },
          metadata,
          `e${i}`,
        );
        const version = id === "node-2" ? node2Version : 1;
        await store.append(
          `node-${id}`,
          [{ ...event, metadata: { ...event.metadata, schemaVersion: version } }],
          "no_stream",
        );
      }
    } finally {
      await store.close();
    }
  }

  it("refuses to start on an event of a schema version it does not know, naming it, and changes nothing", async () => {
    const dataDir = tempDir();
    const file = join(dataDir, "shoal.db");
    await storeWith(file, 2);
    const before = rows(file);
    const { args } = await serveArgs(dataDir, ["-c", "NodeID=node-0"]);
    const res = await runShoal(args);
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(
      `Error: cannot use the event store: stream node-node-2@0 (position 2) holds a NodeRegistered of schema version 2; this Shoal reads NodeRegistered up to version 1: ${NEWER}\n`,
    );
    expect(rows(file)).toEqual(before);
    expect(existsSync(join(dataDir, "nats"))).toBe(false);

    // The same store with version 1 throughout starts.
    const current = join(tempDir(), "shoal.db");
    await storeWith(current, 1);
    await startServe(dirname(current), ["-c", "NodeID=node-0"]);
  });

  it("refuses to start on a store file of a newer layout, naming its version, and changes nothing", async () => {
    const dataDir = tempDir();
    const file = join(dataDir, "shoal.db");
    await storeWith(file, 1);
    expect(rows(file).version).toBe(3);
    const db = new Database(file);
    db.pragma("user_version = 4");
    db.close();
    const before = rows(file);
    const { args } = await serveArgs(dataDir, ["-c", "NodeID=node-0"]);
    const res = await runShoal(args);
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(
      `Error: cannot use the event store: ${file} is a store file of version 4; this Shoal reads store files up to version 3: ${NEWER}\n`,
    );
    expect(rows(file)).toEqual(before);
  });
});

describe.skipIf(cannotMount !== undefined)("stores that cannot be written, with real processes", TIMEOUT, () => {
  it("refuses to start on a read-only store file or a read-only DataDir, leaving both as they were", async () => {
    const fs = mountTmpfs(64 * 1024 * 1024);
    mounted.push(fs);
    const first = await startServe(fs.dir, ["-c", "NodeID=node-0"]);
    expect(await first.process.kill("SIGTERM")).toBe(0);
    const before = snapshot(fs.dir);

    const undo = bindReadOnly(join(fs.dir, "shoal.db"));
    try {
      const { args } = await serveArgs(fs.dir, ["-c", "NodeID=node-0"]);
      const res = await runShoal(args);
      expect(res.code).toBe(1);
      expect(res.stderr).toBe(
        `Error: cannot use the event store: event store unavailable: cannot open SQLite store ${fs.dir}/shoal.db: it is read-only (the filesystem holding ${fs.dir}/shoal.db is read-only)\n`,
      );
    } finally {
      undo();
    }

    fs.remountReadOnly();
    const { args } = await serveArgs(fs.dir, ["-c", "NodeID=node-0"]);
    const res = await runShoal(args);
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(`Error: DataDir ${fs.dir} cannot be written (EROFS); Shoal keeps its state there\n`);
    expect(snapshot(fs.dir)).toEqual(before);
  });

  it("answers 503 with Retry-After on a full disk, stores nothing, and takes the same request once space is back", async () => {
    const fs = mountTmpfs(64 * 1024 * 1024);
    mounted.push(fs);
    const serve = await startServe(fs.dir, ["-c", "NodeID=node-0"]);
    startCompute("node-1", serve);
    await waitFor(
      async () => (await get(`${serve.api}/api/v1/orchestrator/nodes/node-1`)).status === 200,
      60_000,
      () => "node-1 registered",
    );

    fs.fill();
    const refused = await approveNode1(serve);
    expect(refused.status).toBe(503);
    expect(refused.retryAfter).toBe("5");
    expect(refused.body).toMatchObject({
      Code: "Unavailable",
      Message: expect.stringMatching(/^event store unavailable: the disk is full \(SQLITE_FULL/),
    });
    expect((await get(`${serve.api}/api/v1/orchestrator/nodes/node-1`)).body.Node.Membership).toBe("PENDING");
    expect(await historyOf(serve, "node-1")).toEqual(["NodeRegistered", "NodeCredentialBound"]);

    fs.free();
    expect((await approveNode1(serve)).status).toBe(200);
    expect(await historyOf(serve, "node-1")).toEqual(["NodeRegistered", "NodeCredentialBound", "NodeApproved"]);
    expect(serve.process.child.exitCode).toBeNull();
  });

  it("keeps the node protocol answering on a full disk, and recovers by itself once space is back: /ready, writes, every event on SHOAL_EVENTS once", async () => {
    const fs = mountTmpfs(64 * 1024 * 1024);
    mounted.push(fs);
    const serve = await startServe(fs.dir, ["-c", "NodeID=node-0"]);
    const computeDir = tempDir();
    startCompute("node-1", serve, computeDir);
    await waitFor(
      async () => (await get(`${serve.api}/api/v1/orchestrator/nodes/node-1`)).status === 200,
      60_000,
      () => "node-1 registered",
    );
    await waitFor(
      () => existsSync(join(computeDir, "compute", "credentials", "node-1.jwt")),
      30_000,
      () => "node-1's JWT",
    );

    // A downstream consumer of SHOAL_EVENTS, reading all along, and node-1 itself (its own login, beside its agent's).
    const reader = await connect({
      servers: `nats://127.0.0.1:${serve.natsPort}`,
      authenticator: credsAuthenticator(readFileSync(join(fs.dir, "credentials", "nats-events-reader.creds"))),
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
    });
    connections.push(reader);
    await (
      await reader.jetstreamManager()
    ).consumers.add("SHOAL_EVENTS", { durable_name: "downstream", ack_policy: AckPolicy.Explicit });
    const messages = await (
      await reader.jetstream().consumers.get("SHOAL_EVENTS", "downstream")
    ).consume({ max_messages: 100 });
    const seen: string[] = [];
    const reading = (async () => {
      for await (const m of messages) {
        seen.push(m.headers?.get("Nats-Msg-Id") ?? "");
        m.ack();
      }
    })();
    const node = await connect({
      servers: `nats://127.0.0.1:${serve.natsPort}`,
      authenticator: jwtLogin(
        readFileSync(join(computeDir, "compute", "credentials", "node-1.jwt"), "utf8").trim(),
        loadOrCreateNodeKey(join(computeDir, "compute"), "node-1"),
      ),
      inboxPrefix: "_INBOX_NODE.node-1",
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
    });
    connections.push(node);
    const client = new ComputeClient(node, "node-1", PROTOCOL_TIMEOUT_MS);
    /** Answered within the node's timeout (a timeout throws), and how long it took. */
    const timed = async <T>(call: () => Promise<T>): Promise<T> => {
      const started = Date.now();
      const answer = await call();
      expect(Date.now() - started).toBeLessThan(PROTOCOL_TIMEOUT_MS);
      return answer;
    };

    // Room for a few large events and then none: the store commits events that JetStream, on the
    // same disk, then has no room for.
    const reserve = join(fs.dir, "reserve");
    writeFileSync(reserve, Buffer.alloc(256 * 1024, 1));
    fs.fill();
    rmSync(reserve);
    let refused: ProtocolResponse | undefined;
    for (let i = 0; i < 40 && refused === undefined; i++) {
      const answer = await timed(() => client.updateInfo(largeInfo("node-1", i)));
      if (!answer.Accepted) refused = answer;
      // Heartbeats are held in memory: a full disk is none of their business.
      expect(await timed(() => client.heartbeatRequest())).toEqual({ Accepted: true });
    }
    expect(refused).toMatchObject({
      Accepted: false,
      Code: "Unavailable",
      Reason: expect.stringMatching(/the disk is full/),
    });
    // Longer than NATS takes to drop a connection that stopped answering pings. (SQLite may still
    // commit a write into the space its log already holds: answered either way, in time.)
    fs.fill(); // whatever a failed write gave back
    for (let i = 0; i < 8; i++) {
      expect(await timed(() => client.heartbeatRequest())).toEqual({ Accepted: true });
      const answer = await timed(() => client.updateInfo(largeInfo("node-1", 100 + i)));
      if (!answer.Accepted)
        expect(answer).toMatchObject({
          Code: "Unavailable",
          Reason: expect.stringMatching(/the disk is full/),
          RetryAfter: 5,
        });
    }

    fs.free();
    // Nobody else writes: readiness finds by itself that the store and JetStream work again.
    await waitFor(
      async () => (await get(`${serve.api}/api/v1/agent/ready`)).status === 200,
      60_000,
      () => "/ready 200 after space is back",
    );
    // Its nats-server may have been restarted to free JetStream: node-1 is back once its connection is, as an agent
    // would be.
    await waitFor(
      async () => (await client.heartbeatRequest().catch(() => undefined))?.Accepted === true,
      30_000,
      () => "node-1's heartbeat answered",
    );
    expect(await timed(() => client.updateInfo(largeInfo("node-1", 200)))).toEqual({ Accepted: true });
    expect((await approveNode1(serve)).status).toBe(200);
    expect(await historyOf(serve, "node-1")).toContain("NodeApproved");

    // Every stored event reaches the consumer once, in store order: from before the disk filled, while it filled, and
    // after.
    const published = async () =>
      (await storedEvents(fs.dir))
        .filter((e) => ["node", "job", "execution"].includes(categoryOf(e.stream)))
        .map((e) => e.id);
    let stored: string[] = [];
    await waitFor(
      async () => {
        stored = await published();
        return seen.length >= stored.length;
      },
      60_000,
      () => `the consumer to see ${stored.length} events; it saw ${seen.length}`,
    );
    await new Promise((r) => setTimeout(r, 1000)); // a duplicate would arrive by now
    await messages.close();
    await reading;
    expect(seen).toEqual(await published());
    expect(serve.process.child.exitCode).toBeNull();
  });

  it.skipIf(cannotMountExt4 !== undefined)(
    "refuses writes with 503 and stores nothing when the store turns read-only while serving",
    async () => {
      const fs = mountExt4(128 * 1024 * 1024);
      mounted.push(fs);
      const serve = await startServe(fs.dir, ["-c", "NodeID=node-0"]);
      startCompute("node-1", serve);
      await waitFor(
        async () => (await get(`${serve.api}/api/v1/orchestrator/nodes/node-1`)).status === 200,
        60_000,
        () => "node-1 registered",
      );

      fs.failReadOnly();
      const refused = await approveNode1(serve);
      expect(refused.status).toBe(503);
      expect(refused.retryAfter).toBe("5");
      expect(refused.body.Message).toMatch(
        /^event store unavailable: it is read-only \(the filesystem holding .* is read-only\)/,
      );
      expect((await get(`${serve.api}/api/v1/orchestrator/nodes/node-1`)).body.Node.Membership).toBe("PENDING");
      expect(await historyOf(serve, "node-1")).toEqual(["NodeRegistered", "NodeCredentialBound"]);
    },
  );
});
