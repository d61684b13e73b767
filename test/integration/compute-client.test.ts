import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { connect, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encode } from "../../src/transport/codec.ts";
import { ComputeClient, OrchestratorUnreachableError } from "../../src/transport/compute-client.ts";
import { EmbeddedNatsServer } from "../../src/transport/embedded-nats-server.ts";
import type { ProtocolResponse } from "../../src/transport/messages.ts";
import { nodeInboxPrefix } from "../../src/transport/subjects.ts";
import { silentLogger, tempDir } from "../support/fixtures.ts";
import { freePort } from "../support/nats-server.ts";
import { waitFor } from "../support/shoal-process.ts";

// A real nats-server with its monitoring port: /connz shows what each connection subscribed to,
// which is what a hub holds per node when leaf servers forward the nodes' interest.
let dir: string;
let server: EmbeddedNatsServer;
let monitor: string;
const connections: NatsConnection[] = [];

async function subscriptionsOf(name: string): Promise<string[]> {
  const res = await fetch(`${monitor}/connz?subs=1`);
  const body = (await res.json()) as { connections: { name?: string; subscriptions_list?: string[] }[] };
  return body.connections.find((c) => c.name === name)?.subscriptions_list ?? [];
}

async function client(name: string): Promise<NatsConnection> {
  const nc = await connect({ servers: server.url, name, inboxPrefix: nodeInboxPrefix(name) });
  connections.push(nc);
  return nc;
}

beforeAll(async () => {
  dir = tempDir("shoal-compute-client-");
  const port = await freePort();
  const httpPort = await freePort();
  const configFile = join(dir, "nats.conf");
  writeFileSync(
    configFile,
    JSON.stringify({ listen: `127.0.0.1:${port}`, http_port: httpPort, pid_file: join(dir, "nats-server.pid") }),
  );
  server = await EmbeddedNatsServer.start({ host: "127.0.0.1", port, dir, logger: silentLogger, configFile });
  monitor = `http://127.0.0.1:${httpPort}`;
});

afterAll(async () => {
  for (const nc of connections) await nc.close().catch(() => undefined);
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("ComputeClient", () => {
  it("holds one subscription, its work subjects, for its calls' replies and its heartbeat refusals", async () => {
    const orchestrator = await client("orchestrator");
    const seen: { subject: string; reply?: string }[] = [];
    orchestrator.subscribe("shoal.compute.node-1.*", {
      callback: (_e, m) => {
        seen.push({ subject: m.subject, reply: m.reply });
        const refused = m.subject.endsWith(".info");
        m.respond(encode(refused ? { Accepted: false, Code: "BadRequest", Reason: "no" } : { Accepted: true }));
      },
    });
    await orchestrator.flush();
    const nc = await client("node-1");
    const node = new ComputeClient(nc, "node-1");
    const refusals: ProtocolResponse[] = [];
    node.onHeartbeatRefused((r) => refusals.push(r));

    // Answered concurrently, each reply matched to its own call.
    const answers = await Promise.all([
      node.heartbeatRequest(),
      node.updateInfo({} as never),
      node.updateResources({} as never),
      node.heartbeatRequest(),
    ]);
    expect(answers).toEqual([
      { Accepted: true },
      { Accepted: false, Code: "BadRequest", Reason: "no" },
      { Accepted: true },
      { Accepted: true },
    ]);
    expect(seen.map((s) => s.subject)).toEqual([
      "shoal.compute.node-1.heartbeat",
      "shoal.compute.node-1.info",
      "shoal.compute.node-1.resources",
      "shoal.compute.node-1.heartbeat",
    ]);
    for (const { reply } of seen) expect(reply).toMatch(/^shoal\.work\.node-1\.reply\.[A-Za-z0-9]+\.\d+$/);
    expect(new Set(seen.map((s) => s.reply)).size).toBe(4);

    // A refusal on the node's refusal subject reaches the handler; an accepted or undecodable one does not.
    orchestrator.publish(
      "shoal.work.node-1.heartbeat-refused",
      encode({ Accepted: false, Code: "NotFound", Reason: "node not registered: node-1" }),
    );
    orchestrator.publish("shoal.work.node-1.heartbeat-refused", encode({ Accepted: true }));
    orchestrator.publish("shoal.work.node-1.heartbeat-refused", new Uint8Array([0xc1]));
    // Replies nobody waits for (another tag, a spent token) and unknown work are ignored.
    orchestrator.publish(`${seen[0]!.reply}`, encode({ Accepted: false, Code: "NotFound", Reason: "late" }));
    orchestrator.publish("shoal.work.node-1.reply.other.0", encode({ Accepted: true }));
    orchestrator.publish("shoal.work.node-1.something-else", encode({ Accepted: true }));
    await orchestrator.flush();
    await waitFor(
      () => refusals.length > 0,
      5000,
      () => "the refusal",
    );
    await nc.flush();
    expect(refusals).toEqual([{ Accepted: false, Code: "NotFound", Reason: "node not registered: node-1" }]);

    expect(await subscriptionsOf("node-1")).toEqual(["shoal.work.node-1.>"]);
  });

  it("says the orchestrator is unreachable when nobody answers (503) and when the answer is late", async () => {
    const nc = await client("node-2");
    const node = new ComputeClient(nc, "node-2", 300);
    await expect(node.updateResources({} as never)).rejects.toThrow(
      new OrchestratorUnreachableError("orchestrator unreachable (503)"),
    );

    const silent = await client("silent");
    const late: string[] = [];
    silent.subscribe("shoal.compute.node-2.*", { callback: (_e, m) => late.push(m.reply ?? "") });
    await silent.flush();
    await expect(node.updateResources({} as never)).rejects.toThrow(
      new OrchestratorUnreachableError("orchestrator unreachable (TIMEOUT)"),
    );
    // The answer that comes after the timeout is dropped, and the next call gets its own.
    expect(late).toHaveLength(1);
    silent.publish(late[0]!, encode({ Accepted: true }));
    await silent.flush();
    const answering = await client("answering");
    answering.subscribe("shoal.compute.node-2.heartbeat", {
      callback: (_e, m) => m.respond(encode({ Accepted: true })),
    });
    await answering.flush();
    expect(await node.heartbeatRequest()).toEqual({ Accepted: true });
  });

  it("fails the calls still waiting when the connection closes, and every later call, as unreachable", async () => {
    const silent = await client("silent-3");
    silent.subscribe("shoal.compute.node-3.*", { callback: () => undefined });
    await silent.flush();
    const nc = await client("node-3");
    const node = new ComputeClient(nc, "node-3", 30_000);
    const waiting = node.updateResources({} as never);
    await nc.flush();
    await nc.close();
    await expect(waiting).rejects.toBeInstanceOf(OrchestratorUnreachableError);
    await expect(node.heartbeatRequest()).rejects.toBeInstanceOf(OrchestratorUnreachableError);
  });

  it("joins with a nats.js request on the join inbox: a join connection makes no work-subject subscription", async () => {
    const orchestrator = await client("orchestrator-4");
    orchestrator.subscribe("shoal.join.*", { callback: (_e, m) => m.respond(encode({ Accepted: true })) });
    await orchestrator.flush();
    const nc = await connect({ servers: server.url, name: "joining", inboxPrefix: "_INBOX_JOIN" });
    connections.push(nc);
    const key = { publicKey: "UKEY", sign: () => new Uint8Array(64) };
    expect(await new ComputeClient(nc, "node-4").join({ NodeID: "node-4" } as never, key, "token")).toEqual({
      Accepted: true,
    });
    const subs = await subscriptionsOf("joining");
    expect(subs.some((s) => s.startsWith("shoal.work."))).toBe(false);
    expect(subs.every((s) => s.startsWith("_INBOX_JOIN."))).toBe(true);
  });
});
