import { createHash } from "node:crypto";

/** Names the link's layout: a verifier that reads another tag knows it is not this chain. */
export const CHAIN_TAG = "shoal-chain/1";
/** A link is a SHA-256 digest. */
export const LINK_BYTES = 32;
/** What the first event of a chain follows: no event, at position 0. */
export const ZERO_LINK: Buffer = Buffer.alloc(LINK_BYTES);

/** The bytes of a stored event that its link covers, as the store keeps them (data and metadata as their JSON text). */
export interface LinkedFields {
  readonly position: number;
  readonly id: string;
  readonly stream: string;
  readonly revision: number;
  readonly type: string;
  readonly time: string;
  readonly data: string;
  readonly metadata: string;
}

const lengthBytes = Buffer.alloc(4);

// Each field goes in with its UTF-8 length before it, so no two different field lists hash the same bytes.
function field(hash: ReturnType<typeof createHash>, text: string): void {
  lengthBytes.writeUInt32BE(Buffer.byteLength(text, "utf8"), 0);
  hash.update(lengthBytes);
  hash.update(text, "utf8");
}

/**
 * The event's link: SHA-256 over the tag, the link and position of the event before it in store
 * order, then this event's position, id, stream, revision, type, time, data and metadata, every
 * field length-prefixed (numbers as their decimal text). The previous link and position make a
 * deleted, inserted or reordered row change every link after it; the event's own fields make an
 * edited row's link differ from the one stored.
 */
export function eventLink(previous: Uint8Array, previousPosition: number, e: LinkedFields): Buffer {
  const hash = createHash("sha256");
  field(hash, CHAIN_TAG);
  lengthBytes.writeUInt32BE(previous.length, 0);
  hash.update(lengthBytes);
  hash.update(previous);
  field(hash, String(previousPosition));
  field(hash, String(e.position));
  field(hash, e.id);
  field(hash, e.stream);
  field(hash, String(e.revision));
  field(hash, e.type);
  field(hash, e.time);
  field(hash, e.data);
  field(hash, e.metadata);
  return hash.digest();
}
