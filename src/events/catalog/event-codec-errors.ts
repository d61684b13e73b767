/**
 * A stored event its codec cannot read (unknown type or version, data its schema rejects): the store is corrupt, never
 * misread.
 */
export class CorruptEventError extends Error {
  override readonly name = "CorruptEventError";
}

/** An event that its own schema rejects; it must never reach the store. */
export class InvalidEventError extends Error {
  override readonly name = "InvalidEventError";
}
