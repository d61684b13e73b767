import {
  CancelledError,
  DeadlineExceededError,
  NotLeaderError,
  TimeoutError,
  UnavailableError,
} from "@eventstore/db-client";
import { StoreUnavailableError, WrongExpectedRevisionError } from "../store/store-errors.ts";

/** Socket-level failures under gRPC: the server is not reachable now. */
const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/** What the client throws when an esdb+discover:// cluster answers none of its attempts. */
const DISCOVERY_FAILED = /^Failed to discover after \d+ attempts/;

/**
 * Whether the failure is the server being away or busy (unreachable, no leader, deadline,
 * cancelled by the server), which a retry later can cure. Refusals that would be refused again
 * (access denied, invalid argument, append too large, stream deleted, …) are not.
 */
function isTransient(e: unknown): boolean {
  if (
    e instanceof UnavailableError ||
    e instanceof DeadlineExceededError ||
    e instanceof NotLeaderError ||
    e instanceof CancelledError ||
    e instanceof TimeoutError
  ) {
    return true;
  }
  if (!(e instanceof Error)) return false;
  const code = (e as NodeJS.ErrnoException).code;
  return (typeof code === "string" && CONNECTION_CODES.has(code)) || DISCOVERY_FAILED.test(e.message);
}

/**
 * Maps a client failure into the store's closed set: only a transient one becomes
 * StoreUnavailableError (503, retried by the node actors); the rest is rethrown as it is and
 * surfaces as Internal, because retrying it would fail the same way.
 */
export function esdbStoreError(e: unknown): unknown {
  if (e instanceof WrongExpectedRevisionError || e instanceof StoreUnavailableError) return e;
  if (isTransient(e)) return new StoreUnavailableError({ reason: e instanceof Error ? e.message : String(e) });
  return e;
}
