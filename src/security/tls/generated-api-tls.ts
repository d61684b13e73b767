import { chmodSync, mkdirSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { isWildcardHost, reachableHost } from "../../net/reachable-host.ts";
import { apiCaPath, apiTlsDir } from "./api-ca-path.ts";
import {
  CA_VALIDITY,
  DAY,
  keptOrIssued,
  newPair,
  readPair,
  RENEW_BEFORE,
  writePair,
  type CertificatePair,
} from "./certificate-pair.ts";

/** A server certificate with less than this left is renewed at start. */
export const SERVER_RENEW_BEFORE = RENEW_BEFORE;
/** Started this close to the CA's end, serve says so: a new CA has to reach every client. */
const CA_WARN_BEFORE = 90 * DAY;
const CA_NAME = "Shoal API CA";

export class GeneratedTlsError extends Error {
  override readonly name = "GeneratedTlsError";
}

export interface GeneratedApiTls {
  readonly cert: string;
  readonly key: string;
  readonly caPath: string;
  /** The CA certificate's SHA-256 fingerprint, as `openssl x509 -fingerprint -sha256` prints it. */
  readonly caFingerprint: string;
  readonly caCreated: boolean;
  /** Why a new server certificate was issued at this start (none: the kept one still fits). */
  readonly serverIssued: string | undefined;
  /** Set when the CA ends within 90 days: it is never replaced silently. */
  readonly caExpiresSoon: string | undefined;
}

/** The names the generated server certificate covers: this machine's loopback names, its host name, API.Host. */
export function serverNames(apiHost: string): string[] {
  const names = ["localhost", "127.0.0.1", "::1", hostname()];
  if (!isWildcardHost(apiHost)) names.push(reachableHost(apiHost));
  return [...new Set(names.map((n) => n.toLowerCase()))];
}

/** A server certificate the generated CA signs: its files' base name under the directory, and its common name. */
export interface GeneratedServer {
  /** `api` (api.crt, api.key) or `nats` (nats.crt, nats.key). */
  readonly file: string;
  readonly commonName: string;
  /** The address the server is told to listen on (API.Host, Orchestrator.Host): covered when it names one. */
  readonly host: string;
}

export interface GeneratedServerTls extends GeneratedApiTls {
  /** The server certificate's and key's files (nats-server reads files, not PEM). */
  readonly certPath: string;
  readonly keyPath: string;
}

/**
 * TLS material generated under `<DataDir>/credentials/tls`, kept across restarts (as k3s does): one CA (10 years),
 * created once and never replaced behind the operator's back, and a server certificate it signs (1 year) for this
 * machine's names and the server's host, issued again at start when it nears its end or no longer covers them. The
 * API and the embedded nats-server each have their own certificate from the one CA, so clients trust one file.
 */
export function loadOrCreateServerTls(dataDir: string, which: GeneratedServer, now: Date): GeneratedServerTls {
  const dir = apiTlsDir(dataDir);
  const caPath = apiCaPath(dataDir);
  const caKeyPath = join(dir, "ca.key");
  const certPath = join(dir, `${which.file}.crt`);
  const keyPath = join(dir, `${which.file}.key`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  let ca: CertificatePair | undefined;
  try {
    ca = readPair(caPath, caKeyPath);
  } catch (e) {
    throw new GeneratedTlsError(
      `${(e as Error).message}; restore it, or remove ${dir} to generate a new CA (clients must then trust the new one)`,
    );
  }
  const caCreated = ca === undefined;
  if (ca === undefined) {
    ca = newPair(CA_NAME, now, CA_VALIDITY, undefined, []);
    writePair(ca, caPath, caKeyPath);
  }
  const caEnd = new Date(ca.certificate.validTo);
  if (caEnd.getTime() <= now.getTime()) {
    throw new GeneratedTlsError(
      `the generated CA ${caPath} ended on ${caEnd.toISOString()}; remove ${dir} to generate a new one ` +
        `(clients must then trust the new ${caPath})`,
    );
  }
  const { pair: server, issued: reason } = keptOrIssued(
    certPath,
    keyPath,
    ca,
    { commonName: which.commonName, names: serverNames(which.host) },
    now,
  );
  return {
    cert: `${server.certPem}${ca.certPem}`,
    key: server.keyPem,
    certPath,
    keyPath,
    caPath,
    caFingerprint: ca.certificate.fingerprint256,
    caCreated,
    serverIssued: reason,
    caExpiresSoon: caEnd.getTime() - now.getTime() < CA_WARN_BEFORE ? caEnd.toISOString() : undefined,
  };
}

/** The API's server certificate (api.crt) from the generated CA. */
export const loadOrCreateApiTls = (dataDir: string, apiHost: string, now: Date): GeneratedApiTls =>
  loadOrCreateServerTls(dataDir, { file: "api", commonName: "Shoal API", host: apiHost }, now);

/** The embedded nats-server's certificate (nats.crt) from the same CA, for Orchestrator.Host. */
export const loadOrCreateNatsTls = (dataDir: string, natsHost: string, now: Date): GeneratedServerTls =>
  loadOrCreateServerTls(dataDir, { file: "nats", commonName: "Shoal NATS", host: natsHost }, now);
