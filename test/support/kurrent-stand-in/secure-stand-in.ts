import { readFileSync } from "node:fs";
import { issueTlsFiles } from "../../../src/security/tls/issued-tls-files.ts";
import { tempDir } from "../fixtures.ts";
import { KurrentStandIn, type StandInOptions } from "./kurrent-stand-in.ts";

/** The user a secure stand-in lets in, with a password no message may show. */
export const STAND_IN_USER = { username: "admin", password: "n0t-changeit_s3cret" } as const;

/**
 * A stand-in in KurrentDB's secure mode: TLS with a node certificate for 127.0.0.1 from `shoal tls issue`'s own
 * code (`--kurrentdb-node`; its CA's ca.crt named in the connection string), and one user. `dir` holds the CA; a new
 * one when absent; `hosts`, the names the certificate is for.
 */
export async function secureStandIn(
  options: StandInOptions & { readonly dir?: string; readonly hosts?: readonly string[] } = {},
): Promise<{ readonly standIn: KurrentStandIn; readonly dir: string; readonly caFile: string }> {
  const dir = options.dir ?? tempDir("shoal-kurrent-tls-");
  const node = { name: "kurrentdb", hosts: options.hosts ?? ["127.0.0.1"] };
  const made = issueTlsFiles(dir, { servers: [], clients: [], kurrentdbNodes: [node] }, new Date());
  const server = made.files[0]!;
  const standIn = await KurrentStandIn.start({
    version: "24.10.4",
    user: STAND_IN_USER,
    ...options,
    tls: {
      cert: readFileSync(server.certPath, "utf8"),
      key: readFileSync(server.keyPath, "utf8"),
      caFile: made.caPath,
    },
  });
  return { standIn, dir, caFile: made.caPath };
}
