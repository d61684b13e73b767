import { hash } from "node:crypto";
import { LINK_BYTES, linkText as textOfLink, type LinkedFields } from "./link-text.ts";

// The layout is Node-free (link-text.ts, which the web console's verification shares); Node's hash is here.
export { CHAIN_TAG, LINK_BYTES, type LinkedFields } from "./link-text.ts";

/** What the first event of a chain follows: no event, at position 0. */
export const ZERO_LINK: Buffer = Buffer.alloc(LINK_BYTES);

const bytes = (text: string): number => Buffer.byteLength(text, "utf8");
const linkText = (previousHex: string, previousPosition: number, e: LinkedFields) =>
  textOfLink(previousHex, previousPosition, e, bytes);

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
