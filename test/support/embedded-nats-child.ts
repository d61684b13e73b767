/**
 * A process that starts an EmbeddedNatsServer and prints its pid, for tests that kill this
 * process with -9 and look at what becomes of the server.
 *
 *   node --import tsx test/support/embedded-nats-child.ts <dir> <port> <always-watchdog: yes|no>
 */
import pino from "pino";
import { EmbeddedNatsServer } from "../../src/transport/embedded-nats-server.ts";

const [dir, port, watchdog] = process.argv.slice(2);
if (dir === undefined || port === undefined) throw new Error("usage: embedded-nats-child.ts <dir> <port> <yes|no>");
const server = await EmbeddedNatsServer.start({
  host: "127.0.0.1",
  port: Number(port),
  dir,
  logger: pino({ level: "silent" }),
  alwaysWatchdog: watchdog === "yes",
});
console.log(`nats-server pid ${server.pid}`);
setInterval(() => undefined, 60_000);
