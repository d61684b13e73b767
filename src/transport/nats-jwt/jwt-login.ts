import type { Authenticator } from "nats";
import type { NatsNkey } from "./nats-nkey.ts";

/** Logs in with a user JWT, proving the key by signing the server's nonce (nats.js's jwtAuthenticator, natively). */
export function jwtLogin(jwt: string, key: Pick<NatsNkey, "publicKey" | "sign">): Authenticator {
  return (nonce?: string) => ({
    jwt,
    nkey: key.publicKey,
    sig: nonce ? Buffer.from(key.sign(new TextEncoder().encode(nonce))).toString("base64url") : "",
  });
}
