import type { NatsConnection } from "nats";
import type { Logger } from "pino";
import type { NatsJwtGate } from "./nats-jwt-gate.ts";

interface ConnectAdvisory {
  readonly client?: { readonly kind?: string; readonly name?: string };
}

/**
 * Keeps leaf servers' account JWT current. A leaf runs with the JWT its configuration was
 * written with (`resolver: MEMORY`), and learns of revocations only while it is connected; so
 * whenever a leaf's system-account login connects to the hub — a leaf started later, or back
 * after losing the hub — the hub's advisory (`$SYS.ACCOUNT.<system>.CONNECT`, kind Leafnode,
 * the leaf's server id as the client's name) makes the orchestrator hand that leaf the account
 * JWT as it stands, until the leaf confirms. When the orchestrator's own system login comes back
 * (it may have missed advisories meanwhile) every connected leaf gets it again.
 */
export function watchLeafServers(system: NatsConnection, systemAccount: string, gate: NatsJwtGate, logger: Logger): () => void {
  const sub = system.subscribe(`$SYS.ACCOUNT.${systemAccount}.CONNECT`, {
    callback: (err, msg) => {
      if (err) return;
      let advisory: ConnectAdvisory;
      try {
        advisory = JSON.parse(new TextDecoder().decode(msg.data)) as ConnectAdvisory;
      } catch {
        return;
      }
      const server = advisory.client?.name;
      if (advisory.client?.kind !== "Leafnode" || !server) return;
      const started = performance.now();
      gate.syncLeaf(server).then(
        () => logger.info({ leaf: server, ms: Math.round(performance.now() - started) }, "leaf server connected; it holds the current account JWT"),
        (e: unknown) => logger.warn({ leaf: server, err: e }, "a leaf server did not confirm the current account JWT; it may admit revoked node keys until it reconnects"),
      );
    },
  });
  let stopped = false;
  void (async () => {
    for await (const status of system.status()) {
      if (stopped) break;
      if (status.type === "reconnect") gate.republish().catch((e: unknown) => logger.warn({ err: e }, "could not hand the leaf servers the current account JWT"));
    }
  })();
  return () => {
    stopped = true;
    sub.unsubscribe();
  };
}
