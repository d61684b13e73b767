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
   */
  private keyBytes: (Uint8Array | undefined)[] = new Array<Uint8Array | undefined>(INITIAL_CAPACITY);
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
      const key = this.keyBytes[i];
      if (key === undefined) return -1;
      if (key.length === length && spells(key, bytes, from)) return this.values[i] as number;
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
      this.keys[at] = id;
      this.keyBytes[at] = Buffer.from(id, "latin1");
      this.count++;
    }
    this.values[at] = slot;
  }

  delete(id: string): void {
    const mask = this.keys.length - 1;
    let hole = this.indexOf(id);
    if (this.keys[hole] === undefined) return;
    this.keys[hole] = undefined;
    this.keyBytes[hole] = undefined;
    this.count--;
    // Move back every entry of the run after the hole that may live there (its home is not between the hole and it).
    for (let i = (hole + 1) & mask; ; i = (i + 1) & mask) {
      const key = this.keys[i];
      if (key === undefined) return;
      const home = hashString(key, this.seed) & mask;
      if (((i - home) & mask) >= ((i - hole) & mask)) {
        this.keys[hole] = key;
        this.keyBytes[hole] = this.keyBytes[i];
        this.values[hole] = this.values[i] as number;
        this.keys[i] = undefined;
        this.keyBytes[i] = undefined;
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

  private rehash(capacity: number): void {
    const { keys, values } = this;
    this.keys = new Array<string | undefined>(capacity);
    this.keyBytes = new Array<Uint8Array | undefined>(capacity);
    this.values = new Int32Array(capacity);
    this.count = 0;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      if (key !== undefined) this.set(key, values[i] as number);
    }
  }
}

function spells(id: Uint8Array, bytes: Uint8Array, from: number): boolean {
  for (let i = 0; i < id.length; i++) if (bytes[from + i] !== id[i]) return false;
  return true;
}
