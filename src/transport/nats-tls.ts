import { createSecureContext, rootCertificates, type SecureContext } from "node:tls";
import type { ConnectionOptions, TlsOptions } from "nats";
import { readServerInfo } from "./nats-server-info.ts";

/** How a NATS client (a compute node, the orchestrator) speaks TLS, and what an operator changes when it fails. */
export interface NatsClientTls {
  /**
   * nats.js's `tls` option: given, the client speaks TLS only, trusting these CAs (with the system's). Absent: TLS
   * when the server requires it, with the system's CAs only.
   */
  readonly options?: NatsTlsOptions;
  /**
   * The options come only from a CA found on this machine, not from the config: a server that does not speak TLS is
   * then spoken to as without them (as with no CA at all), rather than refused.
   */
  readonly optional?: boolean;
  /** What makes the client trust the server's certificate, for the error that says it does not. */
  readonly trustFix: string;
  /** What makes the client and a plain-NATS server agree, for the error that says the server does not speak TLS. */
  readonly plainFix: string;
  /** What makes a server that verifies client certificates (mutual TLS) let this client in. */
  readonly clientCertFix?: string;
}

/** node:tls's codes for a certificate chain the client cannot verify (the issuer unknown or untrusted). */
const UNTRUSTED = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_UNTRUSTED",
  "CERT_SIGNATURE_FAILURE",
]);

/** nats.js's `tls` option as Shoal passes it: node:tls options, which nats.js hands to `tls.connect` as they are. */
export type NatsTlsOptions = TlsOptions & {
  readonly secureContext?: SecureContext;
  readonly rejectUnauthorized?: boolean;
};

/**
 * The nats.js `tls` option for CAs trusted besides the system's, a client certificate, or no check at all. The CAs
 * and the client certificate go into one SecureContext, built here once: given as `ca`, node:tls would parse the
 * system's bundle again at every connection (300 connections measured 13 times slower than with it shared).
 */
export function natsTlsOptions(given: {
  readonly cas?: readonly string[];
  readonly clientCert?: string;
  readonly clientKey?: string;
  readonly insecure?: boolean;
}): NatsTlsOptions {
  const cas = given.cas ?? [];
  const shared = cas.length > 0 || given.clientCert !== undefined;
  return {
    ...(shared
      ? {
          secureContext: createSecureContext({
            // Node's `ca` replaces the system's CAs; a given CA is trusted besides them, as the CLI trusts the API's.
            ...(cas.length > 0 ? { ca: [...rootCertificates, ...cas] } : {}),
            ...(given.clientCert === undefined ? {} : { cert: given.clientCert }),
            ...(given.clientKey === undefined ? {} : { key: given.clientKey }),
          }),
        }
      : {}),
    ...(given.insecure === true ? { rejectUnauthorized: false } : {}),
  };
}

/** The `tls` part of nats.js's connection options (none: as nats.js does by itself). */
export const tlsConnectionOptions = (tls: NatsClientTls | undefined): Partial<ConnectionOptions> =>
  tls?.options === undefined ? {} : { tls: tls.options };

/** nats.js's refusal to connect without TLS when asked for it: the server does not speak TLS. */
export function isPlainServer(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return code === "SERVER_OPT_NA" && message === "tls";
}

/**
 * A sentence for a connection that failed over TLS, naming the fix (undefined: not a TLS failure). nats.js passes
 * node:tls's errors on as they are, and says `tls` (SERVER_OPT_NA) when the client asked for TLS of a plain server.
 */
export function natsTlsProblem(error: unknown, url: string, tls: NatsClientTls | undefined): string | undefined {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  const text = typeof message === "string" ? message : String(error);
  if (isPlainServer(error))
    return (
      `the NATS server at ${url} does not speak TLS, but this client asks for it: ` + (tls?.plainFix ?? "use TLS there")
    );
  if (typeof code !== "string") return undefined;
  const fix = tls?.trustFix ?? "trust the CA that signed it";
  if (UNTRUSTED.has(code))
    return `the NATS server at ${url} presents a certificate this client does not trust (${text}): ${fix}`;
  if (code === "ERR_TLS_CERT_ALTNAME_INVALID")
    return (
      `the NATS server at ${url} presents a certificate for other names (${text}): connect by a name it covers ` +
      "(a generated one covers the orchestrator's host name and Orchestrator.Host)"
    );
  if (code === "CERT_HAS_EXPIRED" || code === "CERT_NOT_YET_VALID")
    return `the NATS server at ${url} presents a certificate outside its validity (${text}); renew it on the server`;
  return undefined;
}

/** The connection went before the server answered: reset or timed out, as a server that wants a certificate does. */
export function cutOffBeforeAnswer(e: unknown): boolean {
  const code = (e as { code?: unknown } | undefined)?.code;
  return code === "TIMEOUT" || code === "ECONNRESET";
}

/**
 * A sentence for a connection that failed because the server verifies client certificates (its INFO says
 * `tls_verify`) and did not take this client's, naming the fix; undefined when no server of `urls` says so. A server
 * that wants a certificate ends the handshake without one, which the client sees only as a reset connection or a
 * timeout: the server's INFO, sent in clear before TLS, tells why.
 */
export async function clientCertificateProblem(
  urls: readonly string[],
  tls: NatsClientTls | undefined,
  shown: (url: string) => string = (url) => url,
): Promise<string | undefined> {
  for (const url of urls) {
    const info = await readServerInfo(url);
    if (info?.tls_verify === true)
      return (
        `the NATS server at ${shown(url)} verifies client certificates (mutual TLS) and did not let this client in: ` +
        (tls?.clientCertFix ?? "present a client certificate its CA signed")
      );
  }
  return undefined;
}
