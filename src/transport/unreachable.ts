const RETRYABLE_CODES = [
  ...["503", "TIMEOUT", "DISCONNECT", "ECONNRESET", "ECONNREFUSED", "EPIPE", "ETIMEDOUT"],
  // nats-server dropped a login that took too long (a storm of them): the next one may pass.
  "AUTHENTICATION_TIMEOUT",
];

/**
 * Whether a NATS call failed because nobody could be reached (NATS down, the orchestrator down
 * or not subscribed, a connection reset mid-reload, a login the server dropped for taking too
 * long in a storm of them): worth trying again, unlike a refusal.
 */
export function isUnreachable(e: unknown): boolean {
  const code = (e as { code?: string } | undefined)?.code ?? "";
  return code.startsWith("CONNECTION") || RETRYABLE_CODES.includes(code);
}
