import { randomFillSync } from "node:crypto";

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));
const POOL_BYTES = 8 * 1024;
const pool = new Uint8Array(POOL_BYTES);
let poolAt = POOL_BYTES;
let lastMs = 0;
let counter = 0;

function randomBytes(n: number): number {
  if (poolAt + n > POOL_BYTES) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const at = poolAt;
  poolAt += n;
  return at;
}

/**
 * A UUID version 7 (RFC 9562): 48 bits of Unix milliseconds, a 12-bit counter, 62 random bits.
 * Event ids made here rise within this process (the counter orders ids of one millisecond, and
 * runs the timestamp ahead by a millisecond when it overflows), so the store's unique index on
 * event ids grows at its end instead of at a random page per insert: an SQLite commit of
 * thousands of appends then writes a few index pages, not most of them. Still a UUID for every
 * store (EventStoreDB requires one), still unique across processes by its random bits.
 */
export function timeOrderedUuid(): string {
  const now = Date.now();
  if (now > lastMs) {
    lastMs = now;
    counter = 0;
  } else if (++counter > 0xfff) {
    lastMs++;
    counter = 0;
  }
  const r = randomBytes(8);
  const ms = lastMs;
  const high = Math.floor(ms / 0x100000000);
  const low = ms >>> 0;
  return (
    HEX[(high >>> 8) & 0xff]! +
    HEX[high & 0xff]! +
    HEX[(low >>> 24) & 0xff]! +
    HEX[(low >>> 16) & 0xff]! +
    "-" +
    HEX[(low >>> 8) & 0xff]! +
    HEX[low & 0xff]! +
    "-" +
    HEX[0x70 | (counter >>> 8)]! +
    HEX[counter & 0xff]! +
    "-" +
    HEX[0x80 | (pool[r]! & 0x3f)]! +
    HEX[pool[r + 1]!]! +
    "-" +
    HEX[pool[r + 2]!]! +
    HEX[pool[r + 3]!]! +
    HEX[pool[r + 4]!]! +
    HEX[pool[r + 5]!]! +
    HEX[pool[r + 6]!]! +
    HEX[pool[r + 7]!]!
  );
}
