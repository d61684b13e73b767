import { isIPv4, isIPv6 } from "node:net";

/** An IPv6 address as a URL spells it, in brackets, or as a listener takes it, bare. */
const unbracket = (host: string): string => host.trim().replace(/^\[(.*)\]$/, "$1");

/** Whether a listen host means every interface: 0.0.0.0, ::, [::], their longer spellings, or empty. */
export function isWildcardHost(host: string): boolean {
  const bare = unbracket(host);
  if (bare === "") return true;
  if (isIPv4(bare)) return bare.split(".").every((part) => Number(part) === 0);
  return isIPv6(bare) && /^[0:]+$/.test(bare);
}

/**
 * The address this machine reaches a server on that listens on host. A wildcard listener is on every interface,
 * but "every interface" is no address a client can connect to: loopback is one of them and always there.
 */
export function reachableHost(host: string): string {
  return isWildcardHost(host) ? "127.0.0.1" : unbracket(host);
}

/** host as a URL's authority needs it: an IPv6 address in brackets, so its colons are not read as the port's. */
export function urlHost(host: string): string {
  const bare = unbracket(host);
  return bare.includes(":") ? `[${bare}]` : bare;
}
