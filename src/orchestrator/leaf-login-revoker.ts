import type { LeafLoginRevoker } from "../api/leaves/leaf-routes.ts";
import { badRequest, unavailable } from "../errors/shoal-error.ts";
import { NatsJwtGateError, type NatsJwtGate } from "../transport/nats-jwt/nats-jwt-gate.ts";

/** `shoal leaf revoke` on the gate, its failures as Shoal's errors. */
export function leafLoginRevoker(gate: NatsJwtGate): LeafLoginRevoker {
  return {
    revokeLeafLogins: (keys) =>
      gate.revokeLeafLogins(keys).catch((e: unknown) => {
        if (e instanceof NatsJwtGateError) throw badRequest(e.message);
        // Already in the account JWT and the server's configuration: pushed again when NATS is back.
        throw unavailable(
          `the revocation is recorded but the hub has not applied it yet (${e instanceof Error ? e.message : String(e)}); run the command again to wait for it`,
        );
      }),
  };
}
