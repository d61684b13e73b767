import { Agent, request } from "node:http";
import { quantile } from "./quantile.ts";

export interface HttpRequestSpec {
  readonly method: "GET" | "PUT" | "POST" | "DELETE";
  readonly path: string;
  readonly body?: string;
}

/** A server the load goes to, with the headers it needs (its own API key). */
export interface HttpTarget {
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface HttpLoadOptions {
  /** Where the load goes; several: connection `w` goes to the `w mod n`-th, with its headers on top of `headers`. */
  readonly url: string | readonly HttpTarget[];
  /** Keep-alive connections, each sending its next request as soon as its last is answered. */
  readonly connections: number;
  readonly seconds: number;
  /** Not counted: lets connections, JIT and the server settle first. */
  readonly warmupSeconds: number;
  /**
   * The i-th request (numbered across every connection, warm-up included), sent on connection
   * `worker`, whose `n`-th request it is: each connection waits for its answer before its next.
   */
  readonly request: (i: number, worker: number, n: number) => HttpRequestSpec;
  /** Sent with every request (the API key). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Whether an answer is a success (default: 2xx). */
  readonly ok?: (status: number) => boolean;
  /** Stops early (e.g. the scenario it runs under is over). */
  readonly until?: () => boolean;
  /**
   * Sent once on every connection before anything is measured, and the load starts only once every connection has
   * its answer: the measured requests then go over open connections, as a client pool's do once it runs, and a
   * connection's opening (accept, handshake) is reported apart, in `openMs`.
   */
  readonly open?: HttpRequestSpec;
}

export interface HttpLoadResult {
  /** Successful answers within the measured window. */
  readonly completed: number;
  /** Failed answers or errors within the window. */
  readonly failed: number;
  /** Successful answers in all (warm-up included): what the server did. */
  readonly succeededInAll: number;
  readonly failedInAll: number;
  readonly seconds: number;
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly firstError?: string;
  /** With `open`: how long until every connection was open and had its first answer. */
  readonly openMs?: number;
}

function send(
  agent: Agent,
  base: URL,
  spec: HttpRequestSpec,
  headers: Readonly<Record<string, string>>,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const body = spec.body === undefined ? undefined : Buffer.from(spec.body);
    const req = request(
      {
        host: base.hostname,
        port: base.port,
        method: spec.method,
        path: spec.path,
        agent,
        headers: {
          ...headers,
          ...(body === undefined ? {} : { "content-type": "application/json", "content-length": body.length }),
        },
      },
      (res) => {
        // Only error bodies are kept (for the report): the generator must cost little beside the server.
        const status = res.statusCode ?? 0;
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => status >= 300 && chunks.push(c));
        res.on("end", () => resolve({ status, body: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/**
 * A closed-loop HTTP load over keep-alive connections (node:http, no client library): every
 * connection sends its next request as soon as the last is answered, through a warm-up and
 * then the measured window. Latency is request sent → answer read to its end.
 */
export async function httpLoad(options: HttpLoadOptions): Promise<HttpLoadResult> {
  const targets = (typeof options.url === "string" ? [{ url: options.url }] : options.url).map((t) => ({
    base: new URL(t.url),
    headers: { ...options.headers, ...t.headers },
  }));
  const targetOf = (w: number) => targets[w % targets.length]!;
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections });
  const ok = options.ok ?? ((s: number) => s >= 200 && s < 300);
  const latencies: number[] = [];
  let completed = 0;
  let failed = 0;
  let succeededInAll = 0;
  let failedInAll = 0;
  let firstError: string | undefined;
  let next = 0;
  let openMs: number | undefined;
  if (options.open !== undefined) {
    const spec = options.open;
    const openedFrom = performance.now();
    const answers = await Promise.all(
      Array.from({ length: options.connections }, (_, w) => send(agent, targetOf(w).base, spec, targetOf(w).headers)),
    );
    const refused = answers.find((a) => !ok(a.status));
    if (refused !== undefined)
      throw new Error(`opening the connections: ${spec.method} ${spec.path}: ${refused.status} ${refused.body}`);
    openMs = performance.now() - openedFrom;
  }
  const start = performance.now();
  const measureFrom = start + options.warmupSeconds * 1000;
  const end = measureFrom + options.seconds * 1000;
  let measuredEnd = end;
  const worker = async (_: unknown, w: number): Promise<void> => {
    const { base, headers } = targetOf(w);
    for (let n = 0; performance.now() < end && !(options.until?.() ?? false); n++) {
      const spec = options.request(next++, w, n);
      const t0 = performance.now();
      let success: boolean;
      try {
        const res = await send(agent, base, spec, headers);
        success = ok(res.status);
        if (!success) firstError ??= `${spec.method} ${spec.path}: ${res.status} ${res.body.slice(0, 300)}`;
      } catch (e) {
        success = false;
        firstError ??= `${spec.method} ${spec.path}: ${e instanceof Error ? e.message : String(e)}`;
      }
      const t1 = performance.now();
      if (success) succeededInAll++;
      else failedInAll++;
      if (t1 < measureFrom || t1 > end) continue;
      if (success) {
        completed++;
        latencies.push(t1 - t0);
      } else failed++;
    }
  };
  await Promise.all(Array.from({ length: options.connections }, worker));
  if (options.until?.()) measuredEnd = Math.min(end, performance.now());
  agent.destroy();
  const sorted = Float64Array.from(latencies).sort();
  const seconds = Math.max(0.001, (measuredEnd - measureFrom) / 1000);
  return {
    completed,
    failed,
    succeededInAll,
    failedInAll,
    seconds,
    perSecond: completed / seconds,
    p50Ms: quantile(sorted, 0.5),
    p99Ms: quantile(sorted, 0.99),
    maxMs: sorted.length === 0 ? Number.NaN : sorted[sorted.length - 1]!,
    ...(firstError === undefined ? {} : { firstError }),
    ...(openMs === undefined ? {} : { openMs }),
  };
}
