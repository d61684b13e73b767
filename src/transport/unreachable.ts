/**
 * Whether a NATS call failed because nobody could be reached (NATS down, the orchestrator down
 * or not subscribed, a connection reset mid-reload): worth trying again, unlike a refusal.
 */
export function isUnreachable(e: unknown): boolean {
  const code = (e as { code?: string } | undefined)?.code ?? "";
  return code.startsWith("CONNECTION") || ["503", "TIMEOUT", "DISCONNECT", "ECONNRESET", "ECONNREFUSED", "EPIPE", "ETIMEDOUT"].includes(code);
}
