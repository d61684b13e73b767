import Database from "better-sqlite3";
import { StoreUnavailableError, WrongExpectedRevisionError } from "../store/store-errors.ts";
import type { WriteFailure } from "./sqlite-batch-writer.ts";

/** An append's event id is already stored somewhere this append could not have put it. */
export class DuplicateEventIdError extends Error {
  override readonly name = "DuplicateEventIdError";
}

/** The port's error (or SQLite's own) for a failure the writer described. */
export function toError(f: WriteFailure): unknown {
  switch (f.t) {
    case "wrong":
      return new WrongExpectedRevisionError({ stream: f.stream, expected: f.expected, actual: f.actual });
    case "duplicate":
      return new DuplicateEventIdError(f.message);
    case "unavailable":
      return new StoreUnavailableError({ reason: f.reason });
    case "sqlite":
      return new Database.SqliteError(f.message, f.code);
    case "error": {
      const e =
        f.name === "TypeError"
          ? new TypeError(f.message)
          : f.name === "RangeError"
            ? new RangeError(f.message)
            : new Error(f.message);
      if (e.name !== f.name) e.name = f.name;
      return e;
    }
  }
}
