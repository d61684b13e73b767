import { ParseResult, Schema } from "effect";
import { Packr } from "msgpackr";
import { schemaFastPath, type SchemaFastPath } from "../events/catalog/schema-fast-path/schema-fast-path.ts";
import { MAX_MESSAGE_BYTES } from "./messages.ts";

// Plain maps, no record extension: any MessagePack implementation can speak the protocol.
const packr = new Packr({ useRecords: false, mapsAsObjects: true });

export class ProtocolError extends Error {
  override readonly name = "ProtocolError";
}

export const encode = (value: unknown): Uint8Array => packr.pack(value);

/**
 * A message to send, refused here (ProtocolError) when its receiver would refuse it for its size:
 * sent anyway, it would be dropped unread, and sent again for ever.
 */
export function encodeMessage(value: unknown): Uint8Array {
  const bytes = packr.pack(value);
  if (bytes.length <= MAX_MESSAGE_BYTES) return bytes;
  throw new ProtocolError(`message is ${bytes.length} bytes; the limit is ${MAX_MESSAGE_BYTES}`);
}

/** Decodes and validates one message; unknown fields, wrong types and garbage are refused. */
export function decode<A, I>(schema: Schema.Schema<A, I>, bytes: Uint8Array): A {
  return validate(schema, unpack(bytes));
}

/** One message's MessagePack, not yet validated: size-checked, garbage refused. */
export function unpack(bytes: Uint8Array): unknown {
  if (bytes.length > MAX_MESSAGE_BYTES)
    throw new ProtocolError(`message is ${bytes.length} bytes; the limit is ${MAX_MESSAGE_BYTES}`);
  try {
    return packr.unpack(bytes);
  } catch (e) {
    throw new ProtocolError(`message is not valid MessagePack: ${(e as Error).message}`);
  }
}

/**
 * Each schema's shortcut past Effect's parser, compiled on first use (null: the schema has a construct
 * the shortcut does not mirror). Effect's parser was a tenth of the orchestrator's samples in a
 * registration storm and about 5 % of them while jobs ran at 10,000 nodes (resource reports, execution
 * reports, the work messages checked before they are sent).
 */
const fastPaths = new WeakMap<Schema.Schema.Any, SchemaFastPath | null>();

function fastPathOf(schema: Schema.Schema.Any): SchemaFastPath | null {
  let fast = fastPaths.get(schema);
  if (fast === undefined) {
    fast = schemaFastPath(schema) ?? null;
    fastPaths.set(schema, fast);
  }
  return fast;
}

/**
 * Validates an unpacked message against its schema (unknown fields refused), explaining what is wrong. A
 * message exactly as the schema would give it back (its keys, in its order) is taken as it is; any other
 * goes through the schema, which accepts or refuses it with its own explanation.
 */
export function validate<A, I>(schema: Schema.Schema<A, I>, raw: unknown): A {
  if (fastPathOf(schema)?.isStored(raw)) return raw as A;
  const result = Schema.decodeUnknownEither(schema, { onExcessProperty: "error" })(raw);
  if (result._tag === "Left") throw new ProtocolError(ParseResult.TreeFormatter.formatErrorSync(result.left));
  return result.right;
}
