import { connect } from "node:tls";
import { status } from "@grpc/grpc-js";
import { AccessDeniedError } from "@kurrent/kurrentdb-client";
import {
  parseConnectionString,
  type ConnectionOptions,
} from "@kurrent/kurrentdb-client/dist/Client/parseConnectionString.js";
import { redactCredentialsIn, redactUrl } from "../../security/redact-url.ts";

/**
 * What the two halves of the client say when the server's certificate is not trusted: grpc-js (appends, the server's
 * features) passes on node:tls's words, the native bridge (reads) rustls's.
 */
const UNTRUSTED =
  /unable to verify the first certificate|self[- ]signed certificate|unable to get (?:local )?issuer certificate|certificate signature failure|UnknownIssuer|BadSignature/i;
const OTHER_NAMES = /does not match certificate's altnames|Hostname\/IP does not match|NotValidForName/i;
const OUT_OF_DATE = /certificate has expired|certificate is not yet valid|\bExpired\b|NotValidYet/;
/** A TLS client answered in clear: the server does not speak TLS. */
const PLAIN_SERVER = /wrong version number|packet length too long|InvalidContentType|CorruptMessage/i;
/** A connection that failed before the server answered anything (grpc-js's words, node's codes). */
const NO_ANSWER = /No connection established|Failed to connect|ECONNRESET|socket hang up/;
/** How long the probe of a server that refused a plain connection waits for a TLS handshake. */
const TLS_PROBE_MS = 2_000;

/** grpc-js's "No connection established. Last error: Error: X. Resolution note: " without the wrapping. */
function detailOf(text: string): string {
  return /Last error: (?:Error: )?([\s\S]*?)\.?(?: Resolution note:[\s\S]*)?$/.exec(text)?.[1]?.trim() || text;
}

/** Whether `host:port` completes a TLS handshake (any certificate): a server that speaks TLS. */
function speaksTls(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, rejectUnauthorized: false, ALPNProtocols: ["h2"], timeout: TLS_PROBE_MS });
    const done = (answer: boolean) => {
      socket.destroy();
      resolve(answer);
    };
    socket.once("secureConnect", () => done(true));
    socket.once("error", () => done(false));
    socket.once("timeout", () => done(false));
  });
}

function settingsOf(url: string): ConnectionOptions | undefined {
  try {
    return parseConnectionString(url);
  } catch {
    return undefined;
  }
}

/**
 * A sentence for a failure to reach or log in to KurrentDB that names what to change, or undefined when the failure
 * is none of those (an unreachable server, a refused write, …). The servers are named by EventStore.URL, never with
 * its credentials. A plain connection refused by a server that speaks TLS looks like any refused connection: the
 * first server is then asked for a TLS handshake, and one that completes it is said to speak TLS.
 */
export async function kurrentConnectionProblem(e: unknown, url: string): Promise<string | undefined> {
  const settings = settingsOf(url);
  if (settings === undefined) return undefined;
  const text = redactCredentialsIn(e instanceof Error ? e.message : String(e), url);
  const where = `KurrentDB at ${redactUrl(url)}`;
  const user = settings.defaultCredentials?.username;
  if (e instanceof AccessDeniedError) {
    const password =
      "(a new server's admin has the password KURRENTDB_DEFAULT_ADMIN_PASSWORD gave it, changeit by default; " +
      "letters, digits and - . _ ~ only)";
    if (user === undefined)
      return (
        `${where} requires a user (access denied) and EventStore.URL names none: give one of $admins in it, ` +
        `kurrentdb://USER:PASSWORD@host:2113?… ${password}`
      );
    // The native bridge (reads) says "access denied" for a wrong password too; only grpc-js keeps the status.
    return e.code === status.UNAUTHENTICATED
      ? `${where} did not accept the password of the user ${user} in EventStore.URL: give that user's ${password}`
      : `${where} refused the user ${user} of EventStore.URL (access denied: a wrong password, or a user without ` +
          `the rights Shoal needs): give the password of a member of $admins ${password}`;
  }
  const tls = settings.tls !== false;
  const ca = settings.tlsCAFile;
  if (tls && UNTRUSTED.test(text))
    return (
      `${where} presents a certificate this client does not trust (${detailOf(text)}): ` +
      (ca === undefined
        ? "name the CA that signed it in EventStore.URL (tlsCAFile=/path/to/ca.crt)"
        : `tlsCAFile=${ca} is not the CA that signed it; name that CA's certificate`)
    );
  if (tls && OTHER_NAMES.test(text))
    return (
      `${where} presents a certificate for other names (${detailOf(text)}): name each server in EventStore.URL by a ` +
      "name its certificate covers, or issue it for the names EventStore.URL gives"
    );
  if (tls && OUT_OF_DATE.test(text))
    return `${where} presents a certificate outside its validity (${detailOf(text)}): renew it on the server`;
  if (tls && PLAIN_SERVER.test(text))
    return (
      `${where} does not speak TLS, but EventStore.URL asks for it (tls=true is the default): run the server ` +
      "secure, or say tls=false in EventStore.URL on a network only Shoal and the server share"
    );
  const first = settings.hosts[0];
  if (!tls && first !== undefined && NO_ANSWER.test(text) && (await speaksTls(first.address, first.port)))
    return (
      `${where} speaks TLS, but EventStore.URL says tls=false: say tls=true and name the CA that signed the ` +
      "server's certificate (tlsCAFile=/path/to/ca.crt)"
    );
  return undefined;
}
