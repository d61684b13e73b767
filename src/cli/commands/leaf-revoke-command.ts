import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { LEAF_SYSTEM_USER, LEAF_USER } from "../../transport/nats-auth/nats-roles.ts";
import { decodeJwt } from "../../transport/nats-jwt/nats-jwt.ts";
import { API_OPTIONS, apiClientFrom } from "../api-client-from-flags.ts";
import { CONFIG_OPTIONS } from "../config-flags.ts";
import { printable } from "../printable.ts";
import { UsageError } from "../usage-error.ts";
import { commandHelp } from "../help/command-help.ts";

const USER_KEY = /^U[A-Z2-7]{55}$/;

/** The key of the leaf login in a leaf-shoal.creds; refuses anything else with what it is. */
function leafKeyIn(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    throw new UsageError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  const jwt = /-----BEGIN NATS USER JWT-----\s*\n\s*(\S+)\s*\n/.exec(text)?.[1];
  if (jwt === undefined) throw new UsageError(`${file} is not a NATS credentials file`);
  let claims: ReturnType<typeof decodeJwt>;
  try {
    claims = decodeJwt(jwt);
  } catch (e) {
    throw new UsageError(`${file}: ${(e as Error).message}`);
  }
  if (claims.name === LEAF_SYSTEM_USER)
    throw new UsageError(`${file} is a leaf's system-account login; give its leaf-shoal.creds (or its directory)`);
  if (claims.name !== LEAF_USER || !USER_KEY.test(claims.sub))
    throw new UsageError(`${file} is not a leaf server's login (shoal leaf config writes leaf-shoal.creds)`);
  return claims.sub;
}

/** Its options, which its spec in help/command-tree.ts describes (test/unit/cli/command-tree.test.ts). */
export const OPTIONS = {
  ...CONFIG_OPTIONS,
  ...API_OPTIONS,
  dir: { type: "string", multiple: true },
  creds: { type: "string", multiple: true },
  key: { type: "string", multiple: true },
  help: { type: "boolean", short: "h" },
} as const;

export async function leafRevokeCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: OPTIONS,
    strict: true,
  });
  if (values.help) {
    console.log(commandHelp("shoal leaf revoke"));
    return 0;
  }
  if (positionals.length !== 1 || positionals[0] !== "revoke")
    throw new UsageError(`shoal leaf revoke: unexpected ${JSON.stringify(positionals.slice(1).join(" "))}`);
  for (const key of values.key ?? [])
    if (!USER_KEY.test(key))
      throw new UsageError(
        `--key: expected a NATS user public key (U followed by 55 base32 characters), got ${JSON.stringify(key)}`,
      );
  const keys = [
    ...(values.dir ?? []).map((dir) => leafKeyIn(join(dir, "leaf-shoal.creds"))),
    ...(values.creds ?? []).map((file) => leafKeyIn(file)),
    ...(values.key ?? []),
  ];
  if (keys.length === 0) throw new UsageError("shoal leaf revoke: give --dir DIR, --creds FILE or --key KEY");
  const { Revoked } = await apiClientFrom(values).request<{ Revoked: string[] }>(
    "POST",
    "/api/v1/orchestrator/leaves/revocations",
    { Keys: [...new Set(keys)] },
  );
  console.log(
    printable(
      `Revoked ${Revoked.join(", ")}: the orchestrator's nats-server refuses ${Revoked.length === 1 ? "that leaf" : "those leaves"} from now on.`,
    ),
  );
  return 0;
}
