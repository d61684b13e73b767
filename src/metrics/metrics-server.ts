import { createHash, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import { reachableHost, urlHost } from "../net/reachable-host.ts";

/** Where a process without the REST API serves its /metrics. Port 0: any free port (tests). */
export interface MetricsListen {
  readonly host: string;
  readonly port: number;
  /** Set: every request must carry `Authorization: Bearer <it>`, as the orchestrator's /metrics takes an API key. */
  readonly bearerToken?: string;
}

export interface MetricsSource {
  readonly contentType: string;
  scrape(): Promise<string>;
}

export interface MetricsServer {
  /** `http://host:port/metrics`. */
  readonly url: string;
  close(): Promise<void>;
}

const digest = (value: string): Buffer => createHash("sha256").update(value, "utf8").digest();

const REALM = 'Bearer realm="shoal-metrics"';

/**
 * Whether the request carries the bearer token, compared as digests in constant time (the answer's timing says nothing
 * of how much of the token was right); else the 401 is sent. A request without the token is told nothing else: not
 * which paths exist, not the metrics.
 */
function authorized(request: IncomingMessage, response: ServerResponse, token: Buffer): boolean {
  const header = request.headers.authorization;
  const given = header === undefined ? undefined : /^Bearer +(\S+) *$/i.exec(header)?.[1];
  if (given !== undefined && timingSafeEqual(digest(given), token)) return true;
  // RFC 6750: a request with no credentials gets the bare challenge; one with the wrong ones, invalid_token.
  const wrong = header !== undefined;
  response
    .writeHead(401, {
      "www-authenticate": wrong ? `${REALM}, error="invalid_token"` : REALM,
      "content-type": "text/plain; charset=utf-8",
    })
    .end(
      wrong
        ? "401 Unauthorized: the bearer token is not this node's Compute.Metrics.BearerToken\n"
        : "401 Unauthorized: this node's /metrics needs Authorization: Bearer <Compute.Metrics.BearerToken>\n",
    );
  return false;
}

/**
 * A plain HTTP server with one route, GET /metrics: a compute node has no REST API to put it on. It answers
 * nothing else (404; 405 for another method), holds no connection open after close, and a scrape that fails is a
 * 500 and a log line, never a crash. With a bearer token, a request without it gets a 401 and nothing else.
 */
export function serveMetrics(source: MetricsSource, listen: MetricsListen, logger: Logger): Promise<MetricsServer> {
  const token = listen.bearerToken === undefined ? undefined : digest(listen.bearerToken);
  const server = createServer((request, response) => {
    if (token !== undefined && !authorized(request, response, token)) return;
    const path = (request.url ?? "").split("?")[0];
    if (path !== "/metrics") return void response.writeHead(404).end();
    if (request.method !== "GET" && request.method !== "HEAD")
      return void response.writeHead(405, { allow: "GET, HEAD" }).end();
    source.scrape().then(
      (body) =>
        response.writeHead(200, { "content-type": source.contentType }).end(request.method === "GET" ? body : ""),
      (err: unknown) => {
        logger.error({ err }, "a metrics scrape failed");
        response.writeHead(500).end();
      },
    );
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(listen.port, listen.host, () => {
      server.off("error", reject);
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://${urlHost(reachableHost(listen.host))}:${port}/metrics`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
