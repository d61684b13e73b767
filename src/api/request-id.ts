import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";

/** Enough for a UUID, a ULID or a tracing id; the charset keeps it safe in logs, headers and events. */
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The request's id: the caller's `X-Request-ID` when it is a sane one, else a new UUID. It is
 * logged, returned in error bodies and recorded as the correlation id of the events the request
 * causes, so a caller cannot make it arbitrarily long or put control characters in it.
 */
export function requestId(request: IncomingMessage): string {
  const header = request.headers["x-request-id"];
  return typeof header === "string" && CLIENT_REQUEST_ID.test(header) ? header : randomUUID();
}
