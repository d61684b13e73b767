import { isIP } from "node:net";
import { parseArgs } from "node:util";
import { issueTlsFiles, type TlsFilesRequest } from "../../security/tls/issued-tls-files.ts";
import { UsageError } from "../usage-error.ts";
import { commandHelp } from "../help/command-help.ts";

const HELP_REF = "shoal tls issue --help";
/** A file name that stays in DIR and is no flag: letters, digits, and . _ - inside. */
const FILE_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,62}[A-Za-z0-9])?$/;
/** A DNS name of labels (RFC 1123); wildcards are left out: a certificate here names each server. */
const DNS_NAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

function fileName(name: string, flag: string, given: string): string {
  if (!FILE_NAME.test(name))
    throw new UsageError(
      `${flag}: NAME must be letters, digits, dots, dashes or underscores (it names NAME.crt), got ${JSON.stringify(given)}`,
      HELP_REF,
    );
  if (name.toLowerCase() === "ca") throw new UsageError(`${flag}: NAME "ca" is the CA's own file`, HELP_REF);
  return name;
}

function server(given: string, flag = "--server"): TlsFilesRequest["servers"][number] {
  const at = given.indexOf("=");
  if (at < 0) throw new UsageError(`${flag}: expected NAME=HOST[,HOST...], got ${JSON.stringify(given)}`, HELP_REF);
  const name = fileName(given.slice(0, at), flag, given);
  const hosts = given
    .slice(at + 1)
    .split(",")
    .map((h) => h.trim().replace(/^\[(.*)\]$/, "$1"));
  for (const host of hosts)
    if (isIP(host) === 0 && !DNS_NAME.test(host))
      throw new UsageError(
        `${flag} ${name}: ${JSON.stringify(host)} is neither a DNS name nor an IP address (give NAME=HOST[,HOST...])`,
        HELP_REF,
      );
  return { name, hosts: [...new Set(hosts.map((h) => h.toLowerCase()))] };
}

/** Its options, which its spec in help/command-tree.ts describes (test/unit/cli/command-tree.test.ts). */
export const OPTIONS = {
  out: { type: "string" },
  server: { type: "string", multiple: true },
  client: { type: "string", multiple: true },
  "kurrentdb-node": { type: "string", multiple: true },
  help: { type: "boolean", short: "h" },
} as const;

export async function tlsCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: OPTIONS,
    strict: true,
  });
  if (values.help) {
    console.log(commandHelp("shoal tls issue"));
    return 0;
  }
  if (positionals.length !== 1 || positionals[0] !== "issue")
    throw new UsageError(`shoal tls: expected "issue", got ${JSON.stringify(positionals.join(" "))}`, HELP_REF);
  if (values.out === undefined || values.out.trim() === "")
    throw new UsageError("shoal tls issue: --out DIR is required", HELP_REF);
  const request: TlsFilesRequest = {
    servers: (values.server ?? []).map((v) => server(v)),
    clients: (values.client ?? []).map((c) => fileName(c, "--client", c)),
    kurrentdbNodes: (values["kurrentdb-node"] ?? []).map((n) => server(n, "--kurrentdb-node")),
  };
  const names = [
    ...request.servers.map((s) => s.name),
    ...request.clients,
    ...(request.kurrentdbNodes ?? []).map((n) => n.name),
  ].map((n) => n.toLowerCase());
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice !== undefined)
    throw new UsageError(`shoal tls issue: ${twice} is given twice (each NAME is one NAME.crt)`, HELP_REF);
  const made = issueTlsFiles(values.out, request, new Date());
  console.log(
    [
      made.caCreated
        ? `Created the CA ${made.caPath} (SHA-256 ${made.caFingerprint}): keep ca.key safe; it is never replaced.`
        : `Kept the CA ${made.caPath} (SHA-256 ${made.caFingerprint}).`,
      ...made.files.map(
        (f) =>
          `${f.issued === undefined ? "Kept" : "Issued"} ${f.kind === "kurrentdb-node" ? "KurrentDB node" : f.kind} certificate ${f.certPath} (key ${f.keyPath}), ` +
          `valid to ${f.validTo}${f.issued === undefined || f.issued === "there was none" ? "" : `; the one there was replaced: ${f.issued}`}.`,
      ),
      ...(made.dirModeWas === undefined
        ? []
        : [`${made.dir} was ${made.dirModeWas.toString(8).padStart(4, "0")}: made 0700 (it holds keys).`]),
    ].join("\n"),
  );
  return 0;
}
