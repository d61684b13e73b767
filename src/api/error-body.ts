import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { ShoalError, asShoalError, type ErrorKind } from "../errors/shoal-error.ts";
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

function fromFastify(error: FastifyError): ShoalError {
  const status = error.statusCode ?? 500;
  if (error.code === "FST_ERR_CTP_BODY_TOO_LARGE") return new ShoalError({ kind: "PayloadTooLarge", message: "request body is too large" });
  if (error.code === "FST_ERR_CTP_INVALID_MEDIA_TYPE") {
    return new ShoalError({ kind: "BadRequest", message: "unsupported content type; send application/json" });
  }
  if (status >= 400 && status < 500) return new ShoalError({ kind: "BadRequest", message: error.message });
  return new ShoalError({ kind: "Internal", message: "internal server error" });
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
  const status = HTTP_STATUS[shoal.kind];
  const body: ErrorBody = {
    Status: status,
    Code: shoal.kind,
    Message: shoal.message,
    RequestID: String(request.id),
    Component: "orchestrator",
    ...(shoal.hint ? { Hint: shoal.hint } : {}),
    ...(shoal.details ? { Details: shoal.details } : {}),
  };
  if (shoal.retryAfterSeconds !== undefined) void reply.header("Retry-After", String(Math.max(1, Math.ceil(shoal.retryAfterSeconds))));
  return reply.status(status).type("application/json").send(body);
}
