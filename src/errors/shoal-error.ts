import { Data } from "effect";
import { StoreUnavailableError } from "../events/store/store-errors.ts";

/**
 * The closed set of failures Shoal reports to callers. HTTP status codes for them live in one
 * place (src/api/error-status.ts); NATS replies carry the kind as their code.
 */
export const ERROR_KINDS = [
  "BadRequest",
  "Unauthorized",
  "Forbidden",
  "NotFound",
  "Conflict",
  "MultipleNodesFound",
  "PreconditionFailed",
  "PayloadTooLarge",
  // HTTP-level refusals of a request that never reached a route (src/api/error-body.ts).
  "RequestTimeout",
  "URITooLong",
  "UnsupportedMediaType",
  "RequestHeaderFieldsTooLarge",
  "Unavailable",
  // A capability this deployment does not have (the hash chain on EventStoreDB).
  "NotImplemented",
  "Internal",
] as const;
export type ErrorKind = (typeof ERROR_KINDS)[number];

export class ShoalError extends Data.TaggedError("ShoalError")<{
  readonly kind: ErrorKind;
  readonly message: string;
  readonly hint?: string;
  readonly details?: Readonly<Record<string, unknown>>;
  /** For Unavailable: when the caller may usefully try again (HTTP Retry-After, NATS RetryAfter). */
  readonly retryAfterSeconds?: number;
}> {}

export const badRequest = (message: string, details?: Record<string, unknown>) =>
  new ShoalError({ kind: "BadRequest", message, ...(details ? { details } : {}) });
export const notFound = (message: string) => new ShoalError({ kind: "NotFound", message });
export const conflict = (message: string) => new ShoalError({ kind: "Conflict", message });
export const unauthorized = (message: string) => new ShoalError({ kind: "Unauthorized", message });
export const forbidden = (message: string) => new ShoalError({ kind: "Forbidden", message });
/** Shoal cannot serve the request now (store or transport trouble); nothing was changed. */
export const unavailable = (message: string, retryAfterSeconds = 5) =>
  new ShoalError({ kind: "Unavailable", message, retryAfterSeconds });

/** How long a caller should wait before retrying after store trouble (disk full, read-only, unreachable). */
export const STORE_RETRY_AFTER_SECONDS = 5;

/**
 * The one place failures from below become Shoal's errors: the store adapters' closed set
 * (StoreUnavailableError) is Unavailable with a retry hint; anything unknown is Internal.
 */
export function asShoalError(e: unknown): ShoalError {
  if (e instanceof ShoalError) return e;
  if (e instanceof StoreUnavailableError) return unavailable(e.message, STORE_RETRY_AFTER_SECONDS);
  return new ShoalError({ kind: "Internal", message: e instanceof Error ? e.message : String(e) });
}
