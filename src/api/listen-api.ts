import type { FastifyInstance } from "fastify";

/** One address to listen on, as Node's `server.listen` takes it. */
export interface ListenAddress {
  readonly host: string;
  /** false on `::`: IPv4 clients are taken too (as `::ffff:a.b.c.d`). */
  readonly ipv6Only?: boolean;
}

/**
 * Where the API listens for API.Host. The IPv4 wildcard, the default, is taken as Go's listener (and so Bacalhau)
 * takes it: every address of both stacks, so that `https://localhost:1234` answers whichever of 127.0.0.1 and ::1 the
 * client's resolver gives first, as the generated certificate names both. A machine without IPv6 listens on IPv4 alone.
 */
export function apiListenAddresses(apiHost: string): ListenAddress[] {
  return apiHost === "0.0.0.0" ? [{ host: "::", ipv6Only: false }, { host: "0.0.0.0" }] : [{ host: apiHost }];
}

/** What a listen fails with when this machine lacks the address or its whole family (a kernel without IPv6). */
const ABSENT = new Set(["EAFNOSUPPORT", "EADDRNOTAVAIL"]);

/**
 * Listens on the first of `addresses` this machine has and says which. Only an absent address moves on to the next:
 * any other failure (the port taken) is the answer, so a port in use on one stack is never hidden by the other.
 */
export async function listenApi(
  app: FastifyInstance,
  port: number,
  addresses: readonly ListenAddress[],
): Promise<ListenAddress> {
  for (const [i, address] of addresses.entries()) {
    try {
      await app.listen({ ...address, port });
      return address;
    } catch (e) {
      const last = i === addresses.length - 1;
      if (last || !ABSENT.has((e as NodeJS.ErrnoException).code ?? "")) throw e;
    }
  }
  throw new Error("the API was given no address to listen on");
}
