// The chain's layout, free of Node: the CLI, the store's writer and the web console link events with it alike.

/** Names the link's layout: a verifier that reads another tag knows it is not this chain. */
export const CHAIN_TAG = "shoal-chain/1";
/** A link is a SHA-256 digest. */
export const LINK_BYTES = 32;

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

// eslint-disable-next-line no-control-regex -- every character below 0x80, control characters included
const ASCII = /^[\x00-\x7F]*$/;

/** The length of `text` in UTF-8 bytes (a lone surrogate counts as the 3 bytes of U+FFFD, as encoders write it). */
export function utf8Length(text: string): number {
  // Most of a log is ASCII: the regular expression engine answers that faster than a loop over the characters.
  if (ASCII.test(text)) return text.length;
  let n = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 2;
      i++;
    } else n += 2;
  }
  return n;
}

/**
 * The text an event's link hashes: the tag, the link (64 hex digits) and position of the event before it in store
 * order, then this event's position, id, stream, revision, type, time, data and metadata, each field written as its
 * length in UTF-8 bytes, a colon, and the field (numbers as their decimal digits). The previous link and position make
 * a deleted, inserted or reordered row change every link after it; the event's own fields make an edited row's link
 * differ from the one stored. One text hashed at once costs half of hashing the fields one by one. `bytes` counts
 * UTF-8 bytes (Node's own Buffer.byteLength where it runs).
 */
export function linkText(
  previousHex: string,
  previousPosition: number,
  e: LinkedFields,
  bytes: (text: string) => number = utf8Length,
): string {
  const before = String(previousPosition);
  const position = String(e.position);
  const revision = String(e.revision);
  return (
    `${bytes(CHAIN_TAG)}:${CHAIN_TAG}${previousHex.length}:${previousHex}${before.length}:${before}` +
    `${position.length}:${position}${bytes(e.id)}:${e.id}${bytes(e.stream)}:${e.stream}${revision.length}:${revision}` +
    `${bytes(e.type)}:${e.type}${bytes(e.time)}:${e.time}${bytes(e.data)}:${e.data}${bytes(e.metadata)}:${e.metadata}`
  );
}
