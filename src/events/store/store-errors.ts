import { Data } from "effect";
import type { ExpectedRevision } from "./event-store.ts";

/** An append's expected revision did not match the stream. `actual` is -1 when the stream does not exist. */
export class WrongExpectedRevisionError extends Data.TaggedError("WrongExpectedRevision")<{
  readonly stream: string;
  readonly expected: ExpectedRevision;
  readonly actual: number;
}> {
  override get message(): string {
    return `stream ${this.stream}: expected revision ${String(this.expected)}, actual ${this.actual === -1 ? "no stream" : this.actual}`;
  }
}

/** The store could not be reached or refused the operation for a reason other than concurrency. */
export class StoreUnavailableError extends Data.TaggedError("StoreUnavailable")<{
  readonly reason: string;
}> {
  override get message(): string {
    return `event store unavailable: ${this.reason}`;
  }
}

/**
 * The store was written by a newer Shoal than this one (an event of a schema version, or a store
 * file of a version, it does not know): reading on would guess at its meaning, so it is refused.
 */
export class NewerStoreError extends Data.TaggedError("NewerStore")<{
  readonly reason: string;
}> {
  override get message(): string {
    return `${this.reason}: a newer Shoal wrote it, and this one does not read what it wrote. Run that version of Shoal (or a newer one); going back to an older one is not supported`;
  }
}
