import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { EmbeddedNatsServer } from "../../src/transport/embedded-nats-server.ts";
import { freePort } from "./free-port.ts";

/**
 * A nats-server with JetStream in a fresh directory on a free port, for a bench to point orchestrators at (an external
 * NATS, as a cluster has); what stops it and removes its directory is pushed onto `cleanups`.
 */
export async function startBenchNats(cleanups: (() => Promise<unknown> | unknown)[]): Promise<EmbeddedNatsServer> {
  const natsDir = mkdtempSync(join(tmpdir(), "shoal-bench-nats-"));
  cleanups.push(() => rmSync(natsDir, { recursive: true, force: true }));
  const server = await EmbeddedNatsServer.start({
    host: "127.0.0.1",
    port: await freePort(),
    dir: natsDir,
    logger: pino({ level: "silent" }),
  });
  cleanups.push(() => server.stop());
  return server;
}
