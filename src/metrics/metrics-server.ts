import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import { reachableHost, urlHost } from "../net/reachable-host.ts";

/** Where a process without the REST API serves its /metrics. Port 0: any free port (tests). */
export interface MetricsListen {
  readonly host: string;
  readonly port: number;
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

/**
 * A plain HTTP server with one route, GET /metrics: a compute node has no REST API to put it on. It answers
 * nothing else (404; 405 for another method), holds no connection open after close, and a scrape that fails is a
 * 500 and a log line, never a crash.
 */
export function serveMetrics(source: MetricsSource, listen: MetricsListen, logger: Logger): Promise<MetricsServer> {
  const server = createServer((request, response) => {
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
