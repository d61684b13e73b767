import type { Module } from "../module.ts";
import type { OrchestratorContext } from "../orchestrator-context.ts";

/** How often the embedded nats-server's generated certificate is checked for renewal (due 30 days before its end). */
const NATS_TLS_RENEWAL_CHECK_MS = 24 * 60 * 60 * 1000;

/**
 * The embedded nats-server's generated certificate renewed by a daily check, by the rule it is renewed by at start, so
 * that a long-running orchestrator never serves an ended one (as the API's: api-module).
 */
export function natsTlsModule(context: OrchestratorContext): Module {
  const { nats, deadlines, clock, logger, stops } = context;
  return {
    name: "NATS certificate renewal",
    arm() {
      const renew = nats.renewTlsIfDue;
      if (renew === undefined) return;
      const stop = deadlines.every("nats:tls-renewal", NATS_TLS_RENEWAL_CHECK_MS, () => {
        try {
          renew(new Date(clock.now()));
        } catch (e) {
          logger.error(
            { err: (e as Error).message },
            "the embedded nats-server's certificate could not be renewed; the old one stays",
          );
        }
      });
      stops.add({ name: "ending the NATS certificate's renewal checks", run: () => stop() });
    },
  };
}
