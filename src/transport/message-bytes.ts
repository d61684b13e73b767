import type { Msg } from "nats";

/**
 * What nats.js (2.x, `MsgImpl`) keeps of a delivered message before anything asks for strings:
 * the subject and reply subject as the bytes it parsed, decoded only when `msg.subject` or
 * `msg.reply` is first read. The heartbeat hot path reads the bytes, so a heartbeat costs no
 * string decode. A nats.js that keeps them otherwise makes these fall back to the public
 * strings: slower, never wrong (test/integration/nats-message-bytes.test.ts notices).
 */
interface ParsedMessage {
  readonly _msg?: { readonly subject?: unknown; readonly reply?: unknown };
}

/** The message's subject: its bytes as received where nats.js keeps them, else the string. */
export function subjectOf(msg: Msg): Uint8Array | string {
  const subject = (msg as unknown as ParsedMessage)._msg?.subject;
  return subject instanceof Uint8Array ? subject : msg.subject;
}

/** Whether the sender asked for a reply (a request), without decoding the reply subject. */
export function asksForReply(msg: Msg): boolean {
  const parsed = (msg as unknown as ParsedMessage)._msg;
  // nats.js sets `reply` on every message it parses: undefined without one, else its bytes.
  if (parsed !== undefined && parsed.subject instanceof Uint8Array && "reply" in parsed) {
    if (parsed.reply === undefined) return false;
    if (parsed.reply instanceof Uint8Array) return parsed.reply.length > 0;
  }
  return msg.reply !== undefined && msg.reply !== "";
}
