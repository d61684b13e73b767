/**
 * The subscribers of bench/event-stream.ts, in a process of their own (their parsing must not be charged to the
 * streaming side): `count` connections to the event stream. Each counts the messages it receives and keeps the last
 * id, on the bytes as they come (no decoding: a thousand clients must not cost more than the server they measure);
 * the first `timed` of them also read each event's append time (`"t":<ms>` in its data) and keep append → receipt.
 *
 *   node --import tsx bench/support/sse-subscribers.ts <url> <count> <timed>
 *
 * Prints `ready` once every connection answered 200, then every 500 ms `progress <the smallest last id>`; on SIGUSR2,
 * one line `report {received: number[], lastIds: number[], latenciesMs: number[]}`.
 */
import { Agent, request } from "node:http";

const [url = "", countText = "1", timedText = "0"] = process.argv.slice(2);
const count = Number(countText);
const timed = Number(timedText);
const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
const received = new Array<number>(count).fill(0);
const lastIds = new Array<number>(count).fill(0);
const latenciesMs: number[] = [];
const ID = Buffer.from("\nid: ");
const DATA = Buffer.from("\ndata: ");
const END = Buffer.from("\n\n");
const TIME = /"t":(\d+)/g;

function open(i: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, headers: { accept: "text/event-stream" } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`subscriber ${i}: HTTP ${res.statusCode}`));
      // Whole messages only: what follows the last blank line waits for the next chunk. The carry keeps the newline
      // before it, so that every id line, the first of a chunk too, follows a newline.
      let carry: Buffer = Buffer.alloc(0);
      res.on("data", (chunk: Buffer) => {
        const now = Date.now();
        const buf: Buffer = carry.length === 0 ? chunk : Buffer.concat([carry, chunk]);
        const boundary = buf.lastIndexOf(END);
        if (boundary === -1) {
          carry = buf;
          return;
        }
        const part = buf.subarray(0, boundary + 1);
        carry = buf.subarray(boundary + 1);
        // JSON escapes line breaks: a newline before "data: " or "id: " starts a field.
        for (let at = part.indexOf(DATA); at !== -1; at = part.indexOf(DATA, at + DATA.length)) received[i]!++;
        const last = part.lastIndexOf(ID);
        if (last !== -1) {
          const from = last + ID.length;
          lastIds[i] = Number(part.toString("latin1", from, part.indexOf(0x0a, from)));
        }
        if (i < timed) for (const m of part.toString("latin1").matchAll(TIME)) latenciesMs.push(now - Number(m[1]));
      });
      resolve();
    });
    req.once("error", reject);
    req.end();
  });
}

for (let i = 0; i < count; i += 50)
  await Promise.all(Array.from({ length: Math.min(50, count - i) }, (_, k) => open(i + k)));
console.log("ready");
setInterval(() => console.log(`progress ${Math.min(...lastIds)}`), 500);
process.on("SIGUSR2", () => console.log(`report ${JSON.stringify({ received, lastIds, latenciesMs })}`));
