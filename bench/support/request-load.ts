import type { NatsConnection } from "nats";

export interface LoadResult {
  /** Replies received within the measured window. */
  readonly completed: number;
  /** Replies that were refusals (as `accepted` judged them) or requests that failed. */
  readonly failed: number;
  readonly seconds: number;
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** The first failure, for the report. */
  readonly firstError?: string;
}

export interface LoadOptions {
  /** Requests are spread over these connections round-robin, as many nodes share a server. */
  readonly connections: readonly NatsConnection[];
  /** The i-th request's subject and payload. */
  readonly request: (i: number) => { readonly subject: string; readonly data: Uint8Array };
  /** Whether a reply is a success. */
  readonly accepted: (data: Uint8Array) => boolean;
  /** Requests kept in flight (closed loop: a reply sends the next). */
  readonly inFlight: number;
  readonly seconds: number;
  /** Not counted: lets connections, JIT and the server settle first. */
  readonly warmupSeconds: number;
}

function quantile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/**
 * A closed-loop request/reply load: `inFlight` requests outstanding at all times, for the warm-up
 * and then the measured window. The generator does the same work whatever answers, so two runs
 * that differ only in the responder compare the responders.
 */
export async function requestLoad(options: LoadOptions): Promise<LoadResult> {
  const { connections, request, accepted, inFlight } = options;
  const latencies: number[] = [];
  let completed = 0;
  let failed = 0;
  let firstError: string | undefined;
  let sent = 0;
  const start = performance.now();
  const measureFrom = start + options.warmupSeconds * 1000;
  const end = measureFrom + options.seconds * 1000;

  const worker = async (): Promise<void> => {
    while (performance.now() < end) {
      const i = sent++;
      const { subject, data } = request(i);
      const nc = connections[i % connections.length]!;
      const t0 = performance.now();
      let ok: boolean;
      try {
        const reply = await nc.request(subject, data, { timeout: 10_000 });
        ok = accepted(reply.data);
        if (!ok) firstError ??= `refused: ${Buffer.from(reply.data).toString("utf8").slice(0, 200)}`;
      } catch (e) {
        ok = false;
        firstError ??= e instanceof Error ? e.message : String(e);
      }
      const t1 = performance.now();
      // A reply counts in the window it arrives in: throughput is replies per second.
      if (t1 < measureFrom || t1 > end) continue;
      if (ok) {
        completed++;
        latencies.push(t1 - t0);
      } else failed++;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const sorted = Float64Array.from(latencies).sort();
  return {
    completed,
    failed,
    seconds: options.seconds,
    perSecond: completed / options.seconds,
    p50Ms: quantile(sorted, 0.5),
    p99Ms: quantile(sorted, 0.99),
    ...(firstError === undefined ? {} : { firstError }),
  };
}
