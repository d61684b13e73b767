import type { NatsConnection } from "nats";

/** No server of the cluster answered a lookup, not even the system account's: busy (electing leaders) or cut off. */
export class AccountLookupUnanswered extends Error {
  override readonly name = "AccountLookupUnanswered";
  /** As a NATS request's: the house's retry helpers try it again (src/transport/unreachable.ts). */
  readonly code = "TIMEOUT";
}

/**
 * The account JWT the servers of a NATS cluster with a full resolver hold for `accounts.account`, asked over the
 * system account (`$SYS.REQ.ACCOUNT.<account>.CLAIMS.LOOKUP`); undefined if they do not know it. A server that does
 * not know an account stays silent, as does one too busy to answer within `timeoutMs`: the system account, which
 * every server of this operator knows, tells the two apart. Throws AccountLookupUnanswered when that is unanswered
 * too.
 */
export async function lookupAccountJwt(
  system: NatsConnection,
  accounts: { readonly account: string; readonly systemAccount: string },
  timeoutMs = 2_000,
): Promise<string | undefined> {
  const jwt = await claimsLookup(system, accounts.account, timeoutMs);
  if (jwt !== "silent") return jwt;
  if ((await claimsLookup(system, accounts.systemAccount, timeoutMs)) !== "silent") return undefined;
  throw new AccountLookupUnanswered(`no NATS server answered a lookup of the system account within ${timeoutMs} ms`);
}

/** `account`'s JWT, undefined if no server looks accounts up (no full resolver), "silent" if none answered in time. */
async function claimsLookup(
  system: NatsConnection,
  account: string,
  timeoutMs: number,
): Promise<string | undefined | "silent"> {
  try {
    const reply = await system.request(`$SYS.REQ.ACCOUNT.${account}.CLAIMS.LOOKUP`, undefined, { timeout: timeoutMs });
    const jwt = new TextDecoder().decode(reply.data);
    return jwt === "" ? undefined : jwt;
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === "TIMEOUT") return "silent";
    if (code === "503") return undefined;
    throw e;
  }
}
