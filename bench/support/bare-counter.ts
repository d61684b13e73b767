/**
 * The baseline of fire-and-forget benchmarks: a NATS subscriber that does nothing but count
 * what it receives. Run as its own process, as the orchestrator is, so both sides of a
 * comparison pay for the same process boundaries. Its count is asked for on `<count-subject>`
 * (answered with the number as text), as the orchestrator's is read from /metrics.
 *
 *   node --import tsx bench/support/bare-counter.ts <nats-url> <subject> <queue> <count-subject>
 *
 * Prints "ready" once subscribed (after a round trip to the server, so nothing is missed).
 */
import { connect } from "nats";

const [url, subject, queue, countSubject] = process.argv.slice(2);
if (url === undefined || subject === undefined || queue === undefined || countSubject === undefined) {
  throw new Error("usage: bare-counter.ts <nats-url> <subject> <queue> <count-subject>");
}
const nc = await connect({ servers: url, name: "bench-bare-counter" });
let received = 0;
nc.subscribe(subject, {
  queue,
  callback: (err) => {
    if (!err) received++;
  },
});
nc.subscribe(countSubject, { callback: (_err, msg) => msg.respond(new TextEncoder().encode(String(received))) });
await nc.flush();
console.log("ready");
process.once("SIGTERM", () => void nc.close().then(() => process.exit(0)));
