import { join, resolve } from "node:path";
import { StartupError } from "../../errors/startup-error.ts";
import { privateDirectory } from "../../fs/private-directory.ts";
import {
  CA_VALIDITY,
  keptOrIssued,
  newPair,
  readPair,
  writePair,
  type CertificatePair,
  type LeafWanted,
} from "./certificate-pair.ts";

const CA_NAME = "Shoal CA";

/** What `shoal tls issue` is asked for: server certificates for hosts, client certificates for names. */
export interface TlsFilesRequest {
  /** Each server's file name (NAME.crt, NAME.key) and the host names and addresses it answers on. */
  readonly servers: readonly { readonly name: string; readonly hosts: readonly string[] }[];
  /** Each client's file name, which is also its certificate's common name (mutual TLS). */
  readonly clients: readonly string[];
  /** Each KurrentDB node's file name and the host names and addresses it answers and gossips on. */
  readonly kurrentdbNodes?: readonly { readonly name: string; readonly hosts: readonly string[] }[];
}

/**
 * The common name of every KurrentDB node's certificate. A node lets in another node (gossip, replication) only when
 * its certificate has the common name of its own (CertificateReservedNodeCommonName, read from its own certificate),
 * so all nodes of a cluster share one.
 */
export const KURRENTDB_NODE_COMMON_NAME = "kurrentdb-node";

export interface IssuedFile {
  readonly name: string;
  readonly kind: "server" | "client" | "kurrentdb-node";
  readonly certPath: string;
  readonly keyPath: string;
  /** Why a new certificate was issued (none: the kept one still does). */
  readonly issued: string | undefined;
  readonly validTo: string;
}

export interface TlsFiles {
  readonly dir: string;
  readonly caPath: string;
  readonly caCreated: boolean;
  readonly caFingerprint: string;
  readonly files: readonly IssuedFile[];
  /** The directory's mode before it was made 0700 (none: it was new or already 0700). */
  readonly dirModeWas: number | undefined;
}

/**
 * TLS files for servers Shoal does not run itself (an external NATS cluster, a KurrentDB cluster) and for clients
 * that present a certificate: a CA (ca.crt, ca.key; 10 years) created in `dir` the first time and kept from then on,
 * never replaced here, and certificates it signs (1 year), issued again only when they near their end, no longer
 * cover their hosts or are not the CA's, as `serve` does for its own. Server certificates are for TLS clients too:
 * nats-server's cluster routes verify the dialling server's certificate as a client's, as KurrentDB nodes do. The CA
 * is read, and refused when unusable, before anything is written.
 */
export function issueTlsFiles(dirGiven: string, request: TlsFilesRequest, now: Date): TlsFiles {
  const dir = resolve(dirGiven);
  const caPath = join(dir, "ca.crt");
  const caKeyPath = join(dir, "ca.key");
  let ca: CertificatePair | undefined;
  try {
    ca = readPair(caPath, caKeyPath);
  } catch (e) {
    throw new StartupError(
      `${(e as Error).message}; restore it, or give another directory for a new CA (everything that trusts the old ` +
        "one must then trust the new one)",
    );
  }
  if (ca !== undefined && new Date(ca.certificate.validTo).getTime() <= now.getTime())
    throw new StartupError(
      `the CA ${caPath} ended on ${new Date(ca.certificate.validTo).toISOString()}; give another directory for a new ` +
        "one (everything that trusts the old one must then trust the new one)",
    );
  if (ca?.certificate.ca === false) throw new StartupError(`${caPath} is not a CA's certificate`);
  const dirModeWas = privateDirectory(dir, "--out", "shoal-tls");
  const caCreated = ca === undefined;
  if (ca === undefined) {
    ca = newPair(CA_NAME, now, CA_VALIDITY, undefined, []);
    writePair(ca, caPath, caKeyPath);
  }
  const signed = ca;
  const issue = (name: string, kind: IssuedFile["kind"], hosts: readonly string[]): IssuedFile => {
    const certPath = join(dir, `${name}.crt`);
    const keyPath = join(dir, `${name}.key`);
    const wanted: LeafWanted =
      kind === "kurrentdb-node"
        ? // RSA: KurrentDB reads no other key. For clients too: a node dials the others with it.
          { commonName: KURRENTDB_NODE_COMMON_NAME, names: hosts, usages: ["server", "client"], keyType: "rsa" }
        : { commonName: name, names: hosts, usages: kind === "server" ? ["server", "client"] : ["client"] };
    const { pair, issued } = keptOrIssued(certPath, keyPath, signed, wanted, now);
    return { name, kind, certPath, keyPath, issued, validTo: new Date(pair.certificate.validTo).toISOString() };
  };
  return {
    dir,
    caPath,
    caCreated,
    caFingerprint: ca.certificate.fingerprint256,
    files: [
      ...request.servers.map((s) => issue(s.name, "server", s.hosts)),
      ...request.clients.map((c) => issue(c, "client", [])),
      ...(request.kurrentdbNodes ?? []).map((n) => issue(n.name, "kurrentdb-node", n.hosts)),
    ],
    dirModeWas,
  };
}
