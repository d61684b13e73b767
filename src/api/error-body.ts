import { Schema } from "effect";
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { ERROR_KINDS, ShoalError, asShoalError, type ErrorKind } from "../errors/shoal-error.ts";
import { StoreUnavailableError } from "../events/store/store-errors.ts";
import { HTTP_STATUS } from "./error-status.ts";

/** Bacalhau's apimodels.APIError shape. */
export interface ErrorBody {
  readonly Status: number;
  readonly Code: ErrorKind;
  readonly Message: string;
  readonly RequestID: string;
  readonly Component: string;
  readonly Hint?: string;
  readonly Details?: Readonly<Record<string, unknown>>;
}

/** ErrorBody as a schema: the OpenAPI document's Error. */
export const ErrorResponse = Schema.Struct({
  Status: Schema.Number.pipe(Schema.int()),
  Code: Schema.Literal(...ERROR_KINDS),
  Message: Schema.String,
  RequestID: Schema.String,
  Component: Schema.String,
  Hint: Schema.optional(Schema.String),
  Details: Schema.optional(
    Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({ jsonSchema: { type: "object" } }),
  ),
}).annotations({ identifier: "Error" });

/** Fastify's own refusals, by the status it gives them, in Shoal's closed set. */
function fromFastify(error: FastifyError): ShoalError {
  const status = error.statusCode ?? 500;
  switch (status) {
    case 404:
      return new ShoalError({ kind: "NotFound", message: error.message });
    case 408:
      return new ShoalError({ kind: "RequestTimeout", message: "the request took too long to arrive" });
    case 413:
      return new ShoalError({ kind: "PayloadTooLarge", message: "request body is too large" });
    case 414:
      // find-my-way's FST_ERR_MAX_PARAM_LENGTH: a path segment longer than the router accepts.
      return new ShoalError({ kind: "URITooLong", message: "a path segment of the URL is too long" });
    case 415:
      return new ShoalError({
        kind: "UnsupportedMediaType",
        message: "unsupported content type; send application/json",
      });
    case 431:
      return new ShoalError({ kind: "RequestHeaderFieldsTooLarge", message: "request headers are too large" });
    default:
      if (status >= 400 && status < 500) return new ShoalError({ kind: "BadRequest", message: error.message });
      return new ShoalError({ kind: "Internal", message: "internal server error" });
  }
}

export function errorBody(error: ShoalError, requestId: string): ErrorBody {
  return {
    Status: HTTP_STATUS[error.kind],
    Code: error.kind,
    Message: error.message,
    RequestID: requestId,
    Component: "orchestrator",
    ...(error.hint ? { Hint: error.hint } : {}),
    ...(error.details ? { Details: error.details } : {}),
  };
}

export function sendError(request: FastifyRequest, reply: FastifyReply, error: unknown): FastifyReply {
  const e =
    error instanceof ShoalError || error instanceof StoreUnavailableError
      ? asShoalError(error)
      : (error as FastifyError)?.code?.startsWith?.("FST_")
        ? fromFastify(error as FastifyError)
        : undefined;
  if (!e) request.log.error({ err: error }, "unhandled error");
  const shoal = e ?? new ShoalError({ kind: "Internal", message: "internal server error" });
  const body = errorBody(shoal, String(request.id));
  if (shoal.retryAfterSeconds !== undefined)
    void reply.header("Retry-After", String(Math.max(1, Math.ceil(shoal.retryAfterSeconds))));
  return reply.status(body.Status).type("application/json").send(body);
}
