import { dirname } from "node:path";
import { parseArgs } from "node:util";
import { currentNatsOperator } from "../../orchestrator/nats-credentials.ts";
import { hubTlsForLeaves } from "../../orchestrator/nats-tls.ts";
import { isWildcardHost, urlHost } from "../../net/reachable-host.ts";
import { leafDirPath, writeLeafServerConfig } from "../../transport/nats-jwt/leaf-server-config.ts";
import { CONFIG_OPTIONS, configFrom } from "../config-flags.ts";
import { UsageError } from "../usage-error.ts";
import { commandHelp } from "../help/command-help.ts";

/** Its options, which its spec in help/command-tree.ts describes (test/unit/cli/command-tree.test.ts). */
export const OPTIONS = {
  ...CONFIG_OPTIONS,
  out: { type: "string" },
  "leaf-dir": { type: "string" },
  hub: { type: "string" },
  listen: { type: "string" },
  name: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

export async function leafCommand(args: string[]): Promise<number> {
  if (args[0] === "revoke") return (await import("./leaf-revoke-command.ts")).leafRevokeCommand(args);
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: OPTIONS,
    strict: true,
  });
  if (values.help) {
    console.log(commandHelp("shoal leaf config"));
    return 0;
  }
  if (positionals.length !== 1 || positionals[0] !== "config")
    throw new UsageError(`shoal leaf: expected "config", got ${JSON.stringify(positionals.join(" "))}`);
  if (values.out === undefined || values.out === "") throw new UsageError("shoal leaf config: --out DIR is required");
  const config = configFrom(values);
  if (config["Orchestrator.NATS.URL"] !== "") {
    throw new UsageError(
      "shoal leaf config: Orchestrator.NATS.URL is set; leaf servers of an external NATS are its operator's to configure",
    );
  }
  const port = config["Orchestrator.NATS.LeafNodes.Port"];
  if (values.hub === undefined && port === 0) {
    throw new UsageError(
      "shoal leaf config: set Orchestrator.NATS.LeafNodes.Port (as the orchestrator has it) or give --hub nats-leaf://host:port",
    );
  }
  const listen = values.listen ?? "0.0.0.0:4222";
  if (!/^(\[[0-9a-fA-F:.]+\]|[^\s:]+):\d{1,5}$/.test(listen) || !validPort(listen.split(":").pop()!)) {
    throw new UsageError(`--listen: expected HOST:PORT with a port from 1 to 65535, got ${JSON.stringify(listen)}`);
  }
  if (values.hub !== undefined) checkHubUrl(values.hub);
  const leafDir = values["leaf-dir"] === undefined ? undefined : checkLeafDir(values["leaf-dir"]);
  // A wildcard listens everywhere and names no address a leaf could dial; loopback would be right
  // only for a leaf on this machine, and a copied config would fail only there, later: ask.
  if (values.hub === undefined && isWildcardHost(config["Orchestrator.Host"])) {
    throw new UsageError(
      `shoal leaf config: Orchestrator.Host is ${config["Orchestrator.Host"]} (every interface), which is no address a leaf can reach: ` +
        `give --hub nats-leaf://<this machine's address as the leaf reaches it>:${port} (nats-leaf://127.0.0.1:${port} for a leaf on this machine)`,
    );
  }
  // nats-server 2.9 refuses a server name with spaces, at start, on the leaf's machine: say it here.
  if (values.name !== undefined && !/^[^\s]+$/.test(values.name))
    throw new UsageError(`--name: a server name without spaces, got ${JSON.stringify(values.name)}`);
  const operator = currentNatsOperator(config);
  if (operator === undefined) {
    throw new UsageError(
      `shoal leaf config: no NATS configuration under ${config.DataDir}/nats; start the orchestrator (shoal serve) with this DataDir first`,
    );
  }
  const hub = values.hub ?? `nats-leaf://${urlHost(config["Orchestrator.Host"])}:${port}`;
  const hubTls = hubTlsForLeaves(config);
  const files = writeLeafServerConfig(operator, {
    hub,
    listen,
    dir: values.out,
    ...(hubTls === undefined ? {} : { hubTls }),
    ...(leafDir ? { leafDir } : {}),
    ...(values.name ? { serverName: values.name } : {}),
  });
  const dir = dirname(files.configFile);
  const written = [files.shoalCreds, files.systemCreds, ...(files.hubCa === undefined ? [] : [files.hubCa])];
  console.log(
    [
      `Wrote ${files.configFile} (with ${written.join(", ")}).`,
      ...(hubTls === undefined
        ? []
        : [
            `The leaf speaks TLS to the hub, trusting ${files.hubCa ?? "its machine's CAs"}; ` +
              "the hub's certificate must cover the host in --hub.",
          ]),
      ...(files.dirModeWas === undefined
        ? []
        : [`${dir} was ${files.dirModeWas.toString(8).padStart(4, "0")}: made 0700 (it holds secrets).`]),
      ...(leafDir === undefined || leafDir === dir
        ? []
        : [
            `leaf.conf names ${leafDir}: copy the files there on the leaf's machine ` +
              "(a 0700 directory, the files 0600).",
          ]),
      `Hub: ${hub}; compute nodes connect to this leaf at ${listen} (Compute.Orchestrators=nats://<this host>:${listen.split(":").pop()}).`,
      `Start it: nats-server -c ${files.leafConfigFile}`,
    ].join("\n"),
  );
  return 0;
}

function checkLeafDir(path: string): string {
  try {
    return leafDirPath(path);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

const validPort = (text: string): boolean => /^\d{1,5}$/.test(text) && Number(text) >= 1 && Number(text) <= 65535;

/** What nats-server accepts as a leaf remote's URL; anything else fails only when the leaf starts. */
function checkHubUrl(hub: string): void {
  let url: URL;
  try {
    url = new URL(hub);
  } catch {
    throw new UsageError(`--hub: expected a URL such as nats-leaf://host:7422, got ${JSON.stringify(hub)}`);
  }
  if (!["nats-leaf:", "tls:", "ws:", "wss:"].includes(url.protocol)) {
    throw new UsageError(`--hub: the scheme must be nats-leaf, tls, ws or wss, got ${JSON.stringify(hub)}`);
  }
  if (url.hostname === "" || (url.port !== "" && !validPort(url.port)))
    throw new UsageError(`--hub: expected a host and a port from 1 to 65535, got ${JSON.stringify(hub)}`);
}
