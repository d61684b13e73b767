import { randomInt } from "node:crypto";

const INITIAL_CAPACITY = 1024;

/**
 * FNV-1a over bytes: an ASCII id hashes the same from its string or from its bytes in a message.
 * Its starting value is this process's own, so ids chosen to collide (long probe runs for every
 * heartbeat) cannot be worked out in advance.
 */
function hashBytes(bytes: Uint8Array, from: number, length: number, seed: number): number {
  let h = seed;
  for (let i = from; i < from + length; i++) h = Math.imul(h ^ (bytes[i] as number), 0x01000193);
  return h >>> 0;
}

function hashString(id: string, seed: number): number {
  let h = seed;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

const isAscii = (id: string) => {
  for (let i = 0; i < id.length; i++) if (id.charCodeAt(i) > 0x7f) return false;
  return true;
};

/**
 * Node id → slot, looked up by the id's bytes where a message carries them: a heartbeat finds
 * its node without decoding, hashing or allocating a string. Node ids are ASCII (a non-ASCII one
 * is not kept, so it is simply never found here). Open addressing with linear probing, at most
 * half full; a deletion shifts the entries after it back, so there are no tombstones.
 */
export class NodeIdTable {
  private keys: (string | undefined)[] = new Array<string | undefined>(INITIAL_CAPACITY);
  /**
   * Each key's bytes, compared on a look-up: comparing bytes with bytes costs the same whatever
   * form V8 keeps the id string in (sliced out of a stream name, say, where charCodeAt was slow).
   * They live one after the other in one arena (`keyAt`: where; the key's length: how many), not
   * in a Buffer object per id (96 bytes each). A deleted key's bytes stay until the next rehash.
   */
  private arena = new Uint8Array(INITIAL_CAPACITY * 16);
  private arenaUsed = 0;
  /** Bytes of the keys in the table now (the rest of arenaUsed is deleted keys'). */
  private liveBytes = 0;
  private keyAt = new Int32Array(INITIAL_CAPACITY);
  private values = new Int32Array(INITIAL_CAPACITY);
  private count = 0;
  private readonly seed = randomInt(2 ** 32) | 0;

  get size(): number {
    return this.count;
  }

  /** The slot of the id spelled by `bytes[from, from + length)`, or -1. */
  find(bytes: Uint8Array, from: number, length: number): number {
    const mask = this.keys.length - 1;
    for (let i = hashBytes(bytes, from, length, this.seed) & mask; ; i = (i + 1) & mask) {
      const key = this.keys[i];
      if (key === undefined) return -1;
      if (key.length === length && spells(this.arena, this.keyAt[i] as number, length, bytes, from))
        return this.values[i] as number;
    }
  }

  set(id: string, slot: number): void {
    if (!isAscii(id)) return;
    const at = this.indexOf(id);
    if (this.keys[at] === undefined) {
      if (2 * (this.count + 1) > this.keys.length) {
        this.rehash(this.keys.length * 2);
        return this.set(id, slot);
      }
      if (this.arenaUsed + id.length > this.arena.length && 2 * this.liveBytes < this.arenaUsed) {
        // Mostly deleted keys' bytes: store the live ones again rather than grow.
        this.rehash(this.keys.length);
        return this.set(id, slot);
      }
      this.keys[at] = id;
      this.keyAt[at] = this.store(id);
      this.liveBytes += id.length;
      this.count++;
    }
    this.values[at] = slot;
  }

  delete(id: string): void {
    const mask = this.keys.length - 1;
    let hole = this.indexOf(id);
    if (this.keys[hole] === undefined) return;
    this.keys[hole] = undefined;
    this.liveBytes -= id.length;
    this.count--;
    // Move back every entry of the run after the hole that may live there (its home is not between the hole and it).
    for (let i = (hole + 1) & mask; ; i = (i + 1) & mask) {
      const key = this.keys[i];
      if (key === undefined) return;
      const home = hashString(key, this.seed) & mask;
      if (((i - home) & mask) >= ((i - hole) & mask)) {
        this.keys[hole] = key;
        this.keyAt[hole] = this.keyAt[i] as number;
        this.values[hole] = this.values[i] as number;
        this.keys[i] = undefined;
        hole = i;
      }
    }
  }

  /** Where `id` is, or the empty index where it would go. */
  private indexOf(id: string): number {
    const mask = this.keys.length - 1;
    let i = hashString(id, this.seed) & mask;
    while (this.keys[i] !== undefined && this.keys[i] !== id) i = (i + 1) & mask;
    return i;
  }

  /** Appends an (ASCII) id's bytes to the arena; where they start. */
  private store(id: string): number {
    if (this.arenaUsed + id.length > this.arena.length) {
      const grown = new Uint8Array(Math.max(this.arena.length * 2, this.arenaUsed + id.length));
      grown.set(this.arena.subarray(0, this.arenaUsed));
      this.arena = grown;
    }
    const at = this.arenaUsed;
    for (let i = 0; i < id.length; i++) this.arena[at + i] = id.charCodeAt(i);
    this.arenaUsed += id.length;
    return at;
  }

  private rehash(capacity: number): void {
    const { keys, values } = this;
    this.keys = new Array<string | undefined>(capacity);
    this.keyAt = new Int32Array(capacity);
    this.values = new Int32Array(capacity);
    // The live keys are stored again: deleted keys' bytes go.
    this.arena = new Uint8Array(Math.max(this.arena.length, 16));
    this.arenaUsed = 0;
    this.liveBytes = 0;
    this.count = 0;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      if (key !== undefined) this.set(key, values[i] as number);
    }
  }
}

function spells(arena: Uint8Array, at: number, length: number, bytes: Uint8Array, from: number): boolean {
  for (let i = 0; i < length; i++) if (bytes[from + i] !== arena[at + i]) return false;
  return true;
}
