import { randomUUID } from "node:crypto";
import { STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import { ShoalError } from "../errors/shoal-error.ts";
import { errorBody } from "./error-body.ts";

function classify(error: NodeJS.ErrnoException): ShoalError {
  if (error.code === "ERR_HTTP_REQUEST_TIMEOUT")
    return new ShoalError({ kind: "RequestTimeout", message: "the request took too long to arrive" });
  if (error.code === "HPE_HEADER_OVERFLOW") {
    return new ShoalError({
      kind: "RequestHeaderFieldsTooLarge",
      message: "the request line and headers are too large (URL or headers over 16 KiB)",
    });
  }
  return new ShoalError({ kind: "BadRequest", message: "malformed HTTP request" });
}

/**
 * The raw HTTP response for a request Node's parser refused before Fastify saw it (a URL or
 * headers over the size limit, a malformed request line, a request too slow to arrive), with
 * Shoal's JSON error body like every other error.
 */
export function clientErrorResponse(error: NodeJS.ErrnoException): string {
  const body = errorBody(classify(error), randomUUID());
  const text = JSON.stringify(body);
  return `HTTP/1.1 ${body.Status} ${STATUS_CODES[body.Status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`;
}

/** Fastify's clientErrorHandler option. */
export function handleClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection has nobody to answer (as Fastify's default handler).
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  if (socket.writable) socket.write(clientErrorResponse(error));
  socket.destroy(error);
}
