import { hash } from "node:crypto";

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

const bytes = (text: string): number => Buffer.byteLength(text, "utf8");
const TAG_FIELD = `${bytes(CHAIN_TAG)}:${CHAIN_TAG}`;

/**
 * The text an event's link hashes: the tag, the link (64 hex digits) and position of the event before it in store
 * order, then this event's position, id, stream, revision, type, time, data and metadata, each field written as its
 * length in UTF-8 bytes, a colon, and the field (numbers as their decimal digits). The previous link and position make
 * a deleted, inserted or reordered row change every link after it; the event's own fields make an edited row's link
 * differ from the one stored. One text hashed at once costs half of hashing the fields one by one.
 */
function linkText(previousHex: string, previousPosition: number, e: LinkedFields): string {
  const before = String(previousPosition);
  const position = String(e.position);
  const revision = String(e.revision);
  return (
    `${TAG_FIELD}${previousHex.length}:${previousHex}${before.length}:${before}${position.length}:${position}` +
    `${bytes(e.id)}:${e.id}${bytes(e.stream)}:${e.stream}${revision.length}:${revision}` +
    `${bytes(e.type)}:${e.type}${bytes(e.time)}:${e.time}${bytes(e.data)}:${e.data}${bytes(e.metadata)}:${e.metadata}`
  );
}

/** The event's link (SHA-256 over its `linkText`), from the previous link's bytes. */
export function eventLink(previous: Uint8Array, previousPosition: number, e: LinkedFields): Buffer {
  const link = Buffer.from(previous.buffer, previous.byteOffset, previous.byteLength).toString("hex");
  return hash("sha256", linkText(link, previousPosition, e), "buffer");
}

/**
 * The same link as 64 lowercase hex digits, from the previous one's: what a writer that chains event after event
 * keeps, as the next text takes the link in hex. Neither the digest's Buffer nor its hex text is made per event.
 */
export function eventLinkHex(previousHex: string, previousPosition: number, e: LinkedFields): string {
  return hash("sha256", linkText(previousHex, previousPosition, e), "hex");
}
