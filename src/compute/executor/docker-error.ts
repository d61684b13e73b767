import { badRequest, conflict, notFound, ShoalError, unavailable } from "../../errors/shoal-error.ts";

/** How long a caller might wait before trying again after the engine failed or was unreachable. */
export const ENGINE_RETRY_AFTER_SECONDS = 10;

const UNREACHABLE_CODES = new Set([
  "ENOENT",
  "ECONNREFUSED",
  "EACCES",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
]);

interface DockerodeError {
  readonly statusCode?: number;
  readonly json?: { readonly message?: unknown } | null;
  readonly code?: string;
  readonly message?: string;
}

/** The engine's own words: dockerode wraps them as "(HTTP code N) reason - message". */
export function dockerMessage(e: unknown): string {
  const err = (e ?? {}) as DockerodeError;
  const fromJson = err.json && typeof err.json.message === "string" ? err.json.message : undefined;
  return (fromJson ?? err.message ?? String(e)).trim();
}

/**
 * Docker's failures in Shoal's closed set: what the engine refuses as asked (400, 404, 409) is
 * the request's fault; an engine that fails (5xx) or cannot be reached is Unavailable, never
 * Internal, so that a sick engine is not taken for a fault in Shoal.
 */
export function dockerError(e: unknown, doing: string): ShoalError {
  if (e instanceof ShoalError) return e;
  const err = (e ?? {}) as DockerodeError;
  const said = dockerMessage(e);
  if (err.code && UNREACHABLE_CODES.has(err.code)) {
    return unavailable(`${doing}: the Docker engine cannot be reached (${said})`, ENGINE_RETRY_AFTER_SECONDS);
  }
  switch (err.statusCode) {
    case 400:
      return badRequest(`${doing}: Docker refused it: ${said}`);
    case 404:
      return notFound(`${doing}: ${said}`);
    case 409:
      return conflict(`${doing}: ${said}`);
    case undefined:
      break;
    default:
      if (err.statusCode >= 500)
        return unavailable(`${doing}: the Docker engine failed: ${said}`, ENGINE_RETRY_AFTER_SECONDS);
  }
  return new ShoalError({ kind: "Internal", message: `${doing}: ${said}` });
}

export function isDockerNotFound(e: unknown): boolean {
  return (e as DockerodeError | undefined)?.statusCode === 404;
}

/**
 * The container is gone or going: 404, or the 409 Docker answers a read of logs from a container it is removing
 * ("can not get logs from container which is dead or marked for removal").
 */
export function isDockerContainerGone(e: unknown): boolean {
  const err = e as DockerodeError | undefined;
  return isDockerNotFound(e) || (err?.statusCode === 409 && /dead or marked for removal/.test(dockerMessage(e)));
}

/** 304 (already stopped) and 409 (not running) both mean there was nothing left to stop. */
export function isDockerAlreadyStopped(e: unknown): boolean {
  const status = (e as DockerodeError | undefined)?.statusCode;
  return status === 304 || status === 409 || status === 404;
}
