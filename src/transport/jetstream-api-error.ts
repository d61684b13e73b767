/** JetStream's own error codes (nats-server's errors.json) that Shoal tells apart. */
export const JS_CODES = {
  /** "no suitable peers for placement": fewer servers (up, with room) than the copies asked for. */
  NO_PEERS: 10005,
  /** "system temporarily unavailable": the servers are still electing a meta leader. */
  TEMPORARILY_UNAVAILABLE: 10008,
  /** "insufficient storage resources available": a server's, or the account's, limit. */
  INSUFFICIENT_RESOURCES: 10047,
  STREAM_NAME_IN_USE: 10058,
  STREAM_NOT_FOUND: 10059,
  /** "wrong last sequence": create on a key that exists, update at a stale revision. */
  WRONG_LAST_SEQUENCE: 10071,
} as const;

/** JetStream's refusal of a failed API call, as nats.js hands it on (undefined for a transport failure). */
export const jetStreamApiError = (err: unknown): { err_code?: number; description?: string } | undefined =>
  (err as { api_error?: { err_code?: number; description?: string } } | undefined)?.api_error;

/** JetStream's own error code of a failed API call (undefined for a transport failure). */
export const jsErrorCode = (err: unknown): number | undefined => jetStreamApiError(err)?.err_code;
