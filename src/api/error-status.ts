import type { ErrorKind } from "../errors/shoal-error.ts";

/** The one place errors become HTTP status codes. */
export const HTTP_STATUS: Record<ErrorKind, number> = {
  BadRequest: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  Conflict: 409,
  MultipleNodesFound: 409,
  PreconditionFailed: 412,
  PayloadTooLarge: 413,
  RequestTimeout: 408,
  URITooLong: 414,
  UnsupportedMediaType: 415,
  RequestHeaderFieldsTooLarge: 431,
  Unavailable: 503,
  NotImplemented: 501,
  Internal: 500,
};
