/**
 * One client process of the registration storm (bench/fleet-storm.ts): joins nodes
 * `<prefix>-<from>` … `<prefix>-<from + count - 1>` over the real protocol, `concurrency` at
 * a time. Each join is what a compute agent does on its first start: a fresh user nkey, the
 * join token's login (`joinLogin`), one join request (`ComputeClient.join`: HMAC proof and key
 * signature), then a login with the user JWT the reply carried (`jwtLogin`) — the server has
 * checked it once `connect` resolves. Then the node's connection is closed (`--hold 0`) or kept
 * (`--hold 1`, bounded by `ulimit -n`, each then heartbeating every 5 s): the storm measures
 * joins, not held connections.
 *
 * node --import tsx bench/support/storm-joiner.ts <nats-url> <token-file> <prefix> <from> <count> <concurrency> <hold>
 *
 * Prints `ready` once loaded, starts when a line arrives on stdin (so that every client's start-up
 * is over before the storm's clock starts), then prints one JSON line every 250 ms and a last one
 * with `done: true`: `{ joined, refused, failed, refusedByCode, errors, lastJoinAt }` (lastJoinAt:
 * Date.now() of the last node whose own login succeeded; errors: the first few failures'
 * messages). A refused or failed join is retried with backoff, as agents do.
 */
import { readFileSync } from "node:fs";
import { connect, type NatsConnection } from "nats";
import { ComputeClient } from "../../src/transport/compute-client.ts";
import { jwtLogin } from "../../src/transport/nats-jwt/jwt-login.ts";
import { newNkey, type NatsNkey } from "../../src/transport/nats-jwt/nats-nkey.ts";
import { joinLogin } from "../../src/transport/nats-jwt/nats-operator.ts";
import { JOIN_INBOX_PREFIX, nodeInboxPrefix } from "../../src/transport/subjects.ts";
import { virtualNodeInfo } from "../../src/sim/virtual-node-info.ts";

const [url, tokenFile, prefix, fromText, countText, concurrencyText, holdText] = process.argv.slice(2);
if (
  url === undefined ||
  tokenFile === undefined ||
  prefix === undefined ||
  fromText === undefined ||
  countText === undefined ||
  concurrencyText === undefined
) {
  throw new Error("usage: storm-joiner.ts <nats-url> <token-file> <prefix> <from> <count> <concurrency> [hold 0|1]");
}
const token = readFileSync(tokenFile, "utf8").trim();
const from = Number(fromText);
const count = Number(countText);
const concurrency = Number(concurrencyText);
const hold = holdText === "1";
const width = Number(process.env.STORM_ID_WIDTH ?? "6");
/** Held nodes also subscribe as an agent does (STORM_AS_AGENT=1). */
const asAgent = process.env.STORM_AS_AGENT === "1";
const MAX_ATTEMPTS = 8;
const HEARTBEAT_MS = 5000;

let joined = 0;
let refused = 0;
let failed = 0;
let lastJoinAt = 0;
const refusedByCode: Record<string, number> = {};
const errors: string[] = [];
const held: { readonly nc: NatsConnection; readonly client: ComputeClient }[] = [];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function joinOnce(index: number, key: NatsNkey): Promise<boolean> {
  const nodeId = `${prefix}-${String(index).padStart(width, "0")}`;
  const joinNc = await connect({
    servers: url,
    authenticator: joinLogin(token),
    inboxPrefix: JOIN_INBOX_PREFIX,
    reconnect: false,
    timeout: 20_000,
  });
  let response;
  try {
    response = await new ComputeClient(joinNc, nodeId, 30_000).join(virtualNodeInfo(nodeId, index), key, token);
  } finally {
    await joinNc.close().catch(() => undefined);
  }
  if (!response.Accepted || response.UserJWT === undefined) {
    refused++;
    const code = response.Code ?? "no JWT";
    refusedByCode[code] = (refusedByCode[code] ?? 0) + 1;
    return false;
  }
  const own = await connect({
    servers: url,
    authenticator: jwtLogin(response.UserJWT, key),
    inboxPrefix: nodeInboxPrefix(nodeId),
    reconnect: false,
    timeout: 20_000,
  });
  joined++;
  lastJoinAt = Date.now();
  if (hold) {
    const client = new ComputeClient(own, nodeId);
    if (asAgent) {
      // What a running agent holds on the server: its heartbeat-refusal subscription and the
      // reply inbox of its requests (interest that a leaf server passes on to the hub, per node).
      client.onHeartbeatRefused(() => undefined);
      await client.heartbeatRequest();
    }
    held.push({ nc: own, client });
  } else await own.close().catch(() => undefined);
  return true;
}

async function joinWithRetries(index: number): Promise<void> {
  // One key per node across its attempts, as an agent keeps its key: a join that was stored but
  // whose reply or login was lost is repeated, idempotently, with the same key.
  const key = newNkey("user");
  for (let attempt = 1; ; attempt++) {
    try {
      if (await joinOnce(index, key)) return;
    } catch (e) {
      failed++;
      const message = (e as Error).message;
      if (errors.length < 5 && !errors.includes(message)) errors.push(message);
    }
    if (attempt >= MAX_ATTEMPTS) throw new Error(`node ${index} could not join in ${MAX_ATTEMPTS} attempts`);
    await sleep(Math.min(200 * 2 ** attempt, 5000) * (0.5 + Math.random() / 2));
  }
}

const report = (done: boolean) =>
  process.stdout.write(`${JSON.stringify({ joined, refused, failed, refusedByCode, errors, lastJoinAt, done })}\n`);
process.stdout.write("ready\n");
await new Promise<void>((resolve) => process.stdin.once("data", () => resolve()));
const ticker = setInterval(() => report(false), 250);
let next = from;
const end = from + count;
await Promise.all(
  Array.from({ length: Math.min(concurrency, count) }, async () => {
    while (next < end) await joinWithRetries(next++);
  }),
);
clearInterval(ticker);
report(true);
if (hold) {
  // Held, each node heartbeating as an agent does (published, every HEARTBEAT_MS, spread evenly),
  // until the bench stops this process (SIGTERM): the connections are what it measures then.
  const tickMs = 100;
  let cursor = 0;
  const beat = setInterval(() => {
    const share = Math.ceil((held.length * tickMs) / HEARTBEAT_MS);
    for (let k = 0; k < share && held.length > 0; k++) held[cursor++ % held.length]!.client.heartbeat();
  }, tickMs);
  process.once("SIGTERM", () => {
    clearInterval(beat);
    void Promise.allSettled(held.map((h) => h.nc.close())).then(() => process.exit(0));
  });
} else process.exit(0);
