/**
 * The baseline of request/reply benchmarks: a NATS responder that does nothing but answer, with
 * the reply a Shoal orchestrator would send, pre-encoded. Run as its own process, as the
 * orchestrator is, so both sides of a comparison pay for the same process boundaries.
 *
 *   node --import tsx bench/support/trivial-responder.ts <nats-url> <subject> <queue>
 *
 * Prints "ready" once subscribed (after a round trip to the server, so no request is lost).
 */
import { connect } from "nats";
import { encode } from "../../src/transport/codec.ts";

const [url, subject, queue] = process.argv.slice(2);
if (url === undefined || subject === undefined || queue === undefined) throw new Error("usage: trivial-responder.ts <nats-url> <subject> <queue>");
const nc = await connect({ servers: url, name: "bench-trivial-responder" });
const reply = encode({ Accepted: true });
nc.subscribe(subject, {
  queue,
  callback: (err, msg) => {
    if (!err) msg.respond(reply);
  },
});
await nc.flush();
console.log("ready");
process.once("SIGTERM", () => void nc.close().then(() => process.exit(0)));
