import { nkeys, type NatsConnection } from "nats";
import { encode } from "../../src/transport/codec.ts";
import { ComputeClient } from "../../src/transport/compute-client.ts";
import { computeInfo } from "../../test/support/fixtures.ts";
import { processCpuMs } from "./process-cpu.ts";

/** Publishes per connection between flushes: keeps the generator's own buffers small. */
const BATCH = 1000;
/**
 * How often a receiver's count is read. A /metrics scrape costs the orchestrator ≈ 3 ms of CPU
 * (the counter's answer over NATS next to nothing): every 100 ms, twice, that was ≈ 6 % of a core
 * the counter did not pay. The last arrival is interpolated between polls, so this sets overhead,
 * not precision.
 */
const POLL_MS = 250;
/** No progress this long: heartbeats were lost (a slow consumer dropped), not merely slow. */
const STALL_MS = 15_000;
const JOIN_CONCURRENCY = 100;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Joins `ids` over NATS with the join token, each with a key of its own, a hundred at a time. */
export async function joinNodes(connections: readonly NatsConnection[], ids: readonly string[], token: string) {
  for (let i = 0; i < ids.length; i += JOIN_CONCURRENCY) {
    await Promise.all(
      ids.slice(i, i + JOIN_CONCURRENCY).map(async (id, j) => {
        const pair = nkeys.createUser();
        const reply = await new ComputeClient(connections[j % connections.length]!, id, 30_000).join(
          computeInfo(id),
          { publicKey: pair.getPublicKey(), sign: (d) => pair.sign(d) },
          token,
        );
        if (!reply.Accepted) throw new Error(`join of ${id} refused: ${reply.Reason}`);
      }),
    );
  }
}

/**
 * The i-th heartbeat of a round spread over the nodes: what an agent publishes (ComputeClient.heartbeat),
 * {NodeID, Sequence}, to the node's subject in `subjects`. The same bytes whichever receiver the subjects lead to.
 */
export function heartbeats(ids: readonly string[], sequences: number[], subjects: readonly string[]) {
  return (i: number) => {
    const n = i % ids.length;
    return { subject: subjects[n]!, data: encode({ NodeID: ids[n]!, Sequence: ++sequences[n]! }) };
  };
}

export interface DrainResult {
  /** The receiver's CPU per message over the round, µs (its polling included). */
  readonly cpuMicros: number;
  readonly perSecond: number;
  readonly seconds: number;
  /** How long publishing alone took: near `seconds`, the generator (not the receiver) was the bottleneck. */
  readonly publishSeconds: number;
}

/**
 * Publishes `total` heartbeats over the connections (each a loop of batches and flushes) and
 * polls `count` until all have arrived; the last one's arrival is interpolated between polls.
 */
export async function drain(
  connections: readonly NatsConnection[],
  total: number,
  message: (i: number) => { subject: string; data: Uint8Array },
  count: () => Promise<number>,
  receiverPid: number | undefined,
): Promise<DrainResult> {
  const from = await count();
  const cpuFrom = processCpuMs(receiverPid);
  const start = performance.now();
  let next = 0;
  let publishedAt = start;
  const publishing = Promise.all(
    connections.map(async (nc) => {
      while (next < total) {
        const end = Math.min(total, next + BATCH);
        for (; next < end; next++) {
          const { subject, data } = message(next);
          nc.publish(subject, data);
        }
        await nc.flush();
      }
      publishedAt = Math.max(publishedAt, performance.now());
    }),
  );
  let last = { at: start, n: 0 };
  let progressAt = start;
  for (;;) {
    await sleep(POLL_MS);
    const n = (await count()) - from;
    const at = performance.now();
    if (n >= total) {
      await publishing;
      if (n > total) throw new Error(`the receiver counted ${n} heartbeats, ${n - total} more than were published`);
      // The count crossed `total` between the two polls: interpolate when (the rate was steady).
      const end = n === last.n ? at : last.at + ((total - last.n) / (n - last.n)) * (at - last.at);
      const seconds = (end - start) / 1000;
      const cpuMicros = ((processCpuMs(receiverPid) - cpuFrom) * 1e3) / total;
      return { perSecond: total / seconds, seconds, publishSeconds: (publishedAt - start) / 1000, cpuMicros };
    }
    if (n > last.n) progressAt = at;
    else if (at - progressAt > STALL_MS)
      throw new Error(`only ${n} of ${total} heartbeats arrived: the rest were lost (a slow consumer?)`);
    last = { at, n };
  }
}
