import { status } from "@grpc/grpc-js";
import {
  CancelledError,
  DeadlineExceededError,
  NotLeaderError,
  TimeoutError,
  UnavailableError,
  UnknownError,
} from "@kurrent/kurrentdb-client";
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

/** gRPC statuses of a server away, overloaded or slow, rather than of a refusal. */
const GRPC_TRANSIENT = new Set<number>([
  status.UNAVAILABLE,
  status.DEADLINE_EXCEEDED,
  status.CANCELLED,
  status.ABORTED,
  status.RESOURCE_EXHAUSTED,
]);

/** What the client throws when an esdb+discover:// cluster answers none of its attempts. */
const DISCOVERY_FAILED = /^Failed to discover after \d+ attempts/;

/**
 * What the server answers an append with while it has no leader to write (an election, a node
 * still starting, a queue full). Its BatchAppend carries them in a status the client does not
 * recognise, so they arrive as UnknownError with the server's message in it.
 */
const NOT_READY = /Server Is Not Ready|Server Is (Too )?Busy|No leader info available in response/;

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
  if (e instanceof UnknownError && NOT_READY.test(e.message)) return true;
  // A commit or forward timeout on the server (ABORTED), which the client leaves unknown when it has no details.
  if (e instanceof UnknownError && e.code === status.ABORTED) return true;
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  // A call's gRPC status as grpc-js gives it, when the client passed it on unconverted (an append whose connection
  // dropped: "14 UNAVAILABLE: Connection dropped").
  if (typeof code === "number") return GRPC_TRANSIENT.has(code);
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
