import { connect } from "nats";
import { jwtLogin } from "../../src/transport/nats-jwt/jwt-login.ts";
import type { NatsNkey } from "../../src/transport/nats-jwt/nats-nkey.ts";

/**
 * Whether the server at `url` lets this JWT and key log in: refused as unauthorized is false; any other failure throws.
 */
export async function jwtLoginAdmitted(url: string, jwt: string, key: NatsNkey): Promise<boolean> {
  try {
    await (await connect({ servers: url, authenticator: jwtLogin(jwt, key), reconnect: false })).close();
    return true;
  } catch (e) {
    if ((e as { code?: string }).code === "AUTHORIZATION_VIOLATION") return false;
    throw e;
  }
}
