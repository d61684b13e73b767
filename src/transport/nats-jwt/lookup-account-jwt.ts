import type { NatsConnection } from "nats";

/**
 * The account JWT the servers of a NATS cluster with a full resolver hold for `account`, asked over the system
 * account (`$SYS.REQ.ACCOUNT.<account>.CLAIMS.LOOKUP`); undefined if none answers within `timeoutMs` (a server that
 * does not know the account stays silent, so another one may answer).
 */
export async function lookupAccountJwt(
  system: NatsConnection,
  account: string,
  timeoutMs = 2_000,
): Promise<string | undefined> {
  try {
    const reply = await system.request(`$SYS.REQ.ACCOUNT.${account}.CLAIMS.LOOKUP`, undefined, { timeout: timeoutMs });
    const jwt = new TextDecoder().decode(reply.data);
    return jwt === "" ? undefined : jwt;
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === "TIMEOUT" || code === "503") return undefined;
    throw e;
  }
}
