import { Schema } from "effect";
import { operatorActor } from "../auth/principal.ts";
import { defineRoute, type AnyRoute } from "../route.ts";

/** What revoking leaf logins needs of the NATS side; fails with Shoal's errors (BadRequest, Unavailable). */
export interface LeafLoginRevoker {
  revokeLeafLogins(keys: readonly string[]): Promise<void>;
}

/** A NATS user public key: `U` and 55 more base32 characters. */
const UserKey = Schema.String.pipe(
  Schema.pattern(/^U[A-Z2-7]{55}$/, {
    message: () => "each key must be a NATS user public key (U followed by 55 base32 characters)",
  }),
);

export const RevokeLeafLoginsRequest = Schema.Struct({
  Keys: Schema.Array(UserKey).pipe(Schema.minItems(1), Schema.maxItems(100)),
});

const RevokeLeafLoginsResponse = Schema.Struct({ Revoked: Schema.Array(Schema.String) }).annotations({
  identifier: "RevokeLeafLoginsResponse",
});

/**
 * `shoal leaf revoke`: a leaf server's login to the hub (the public key in its leaf-shoal.creds)
 * revoked in the account JWT. Shoal's own route (Bacalhau has no leaf servers); `write:node`, as
 * every write outside Bacalhau's map.
 */
export function leafRoutes(revoker: LeafLoginRevoker): AnyRoute[] {
  return [
    defineRoute({
      method: "POST",
      path: "/api/v1/orchestrator/leaves/revocations",
      operationId: "revokeLeafLogins",
      tags: ["Leaves"],
      summary: "Revokes leaf servers' logins to the hub.",
      description:
        "Revokes leaf servers' logins to the hub (the keys of their leaf-shoal.creds): the hub drops them and refuses them from then on",
      capability: "write:node",
      body: RevokeLeafLoginsRequest,
      bodyComponent: "RevokeLeafLoginsRequest",
      responses: { "200": { description: "Revoked, and applied by the hub", schema: RevokeLeafLoginsResponse } },
      errors: ["BadRequest", "Unavailable", "PayloadTooLarge", "UnsupportedMediaType"],
      handler: async ({ body }, request) => {
        const by = operatorActor(request);
        await revoker.revokeLeafLogins(body.Keys);
        request.log.info({ keys: body.Keys, by: by.id }, "leaf server logins revoked");
        return { Revoked: body.Keys };
      },
    }),
  ];
}
