import { readFileSync } from "node:fs";
import {
  distinctCheckpoints,
  isAuditPublicKey,
  type AuditCheckpoint,
} from "../../events/chain/checkpoint-signature.ts";
import type { LinkedFields } from "../../events/chain/event-link.ts";
import { nodeChainCrypto } from "../../events/chain/node-chain-crypto.ts";
import { parseCheckpoints } from "../../events/chain/parse-checkpoints.ts";
import {
  chainStart,
  verifyChain,
  type ChainGenesisRecord,
  type ChainRow,
  verdictSummary,
} from "../../events/chain/verify-chain.ts";
import { apiClientFrom } from "../api-client-from-flags.ts";
import type { ApiClient } from "../api-client.ts";
import { JOB_COMMON_OPTIONS } from "../job-options.ts";
import { ndjsonLines, openNdjson } from "../ndjson-request.ts";
import { wholeNumberFlag } from "../number-flag.ts";
import { parseCommandArgs } from "../parse-command-args.ts";
import { printable } from "../printable.ts";
import { UsageError } from "../usage-error.ts";
import { commandHelp } from "../help/command-help.ts";

const HELP_REF = "shoal audit verify --help";

// No --output: the report is lines of text (the API's other commands take one).
const { output: _output, ...COMMON } = JOB_COMMON_OPTIONS;

export const OPTIONS = {
  ...COMMON,
  from: { type: "string" },
  to: { type: "string" },
  checkpoint: { type: "string", multiple: true },
  key: { type: "string", multiple: true },
  store: { type: "string" },
  quiet: { type: "boolean" },
} as const;

/** What a verification reads: the genesis, the stored link at a position, the rows in order, the stored checkpoints. */
interface ChainSource {
  genesis(): Promise<ChainGenesisRecord>;
  /** The newest stored position (0: no events). */
  head(): Promise<number>;
  linkAt(position: number): Promise<Uint8Array | null | undefined>;
  rows(after: number, to: number | undefined): AsyncIterable<ChainRow>;
  checkpoints(): Promise<AuditCheckpoint[]>;
  close(): void;
}

async function storeSource(path: string): Promise<ChainSource> {
  const { openChainFile } = await import("../../events/sqlite/sqlite-chain-source.ts");
  const { reader, close } = openChainFile(path);
  return {
    genesis: async () => reader.genesis(),
    head: async () => reader.head(),
    linkAt: async (p) => reader.linkAt(p),
    rows: (after, to) => reader.rows(after, to),
    checkpoints: async () => reader.checkpoints(),
    close,
  };
}

const AUDIT = "/api/v1/orchestrator/audit";
/** Rows per request of the chain route. */
const PAGE = 5000;

/** A row of GET /audit/chain: the fields a link covers, and the stored link in hex. */
type WireRow = LinkedFields & { readonly link: string | null };

const fromWire = (r: WireRow): ChainRow => ({ ...r, link: r.link === null ? null : Buffer.from(r.link, "hex") });

async function apiPage(api: ApiClient, after: number, limit: number): Promise<ChainRow[]> {
  const response = await openNdjson(api, `${AUDIT}/chain?after=${after}&limit=${limit}`);
  const rows: ChainRow[] = [];
  for await (const line of ndjsonLines(response)) rows.push(fromWire(JSON.parse(line) as WireRow));
  return rows;
}

function apiSource(api: ApiClient): ChainSource {
  return {
    genesis: async () => {
      const g = await api.request<{ AfterPosition: number; Link: string }>("GET", `${AUDIT}/genesis`);
      return { afterPosition: g.AfterPosition, link: Buffer.from(g.Link, "hex") };
    },
    head: async () => (await api.request<{ Head: number }>("GET", `${AUDIT}/genesis`)).Head,
    linkAt: async (p) => {
      const [row] = p < 1 ? [] : await apiPage(api, p - 1, 1);
      return row?.position === p ? row.link : undefined;
    },
    async *rows(after, to) {
      for (let cursor = after; to === undefined || cursor < to;) {
        const page = await apiPage(api, cursor, PAGE);
        for (const row of page) yield row;
        if (page.length < PAGE) return;
        cursor = page[page.length - 1]!.position;
      }
    },
    checkpoints: async () => {
      const out: AuditCheckpoint[] = [];
      for (let after = 0; ;) {
        const page = await api.request<{ Items: AuditCheckpoint[]; NextToken: string }>(
          "GET",
          `${AUDIT}/checkpoints?after=${after}`,
        );
        out.push(...page.Items);
        if (page.NextToken === "") return out;
        after = Number(page.NextToken);
      }
    },
    close: () => undefined,
  };
}

export async function auditVerifyCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, OPTIONS, HELP_REF);
  if (values.help) {
    console.log(commandHelp("shoal audit verify"));
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`, HELP_REF);
  const from = values.from === undefined ? undefined : wholeNumberFlag(values.from, "--from", 1, undefined, HELP_REF);
  const to = values.to === undefined ? undefined : wholeNumberFlag(values.to, "--to", 1, undefined, HELP_REF);
  if (from !== undefined && to !== undefined && from > to)
    throw new UsageError(`--from (${from}) is after --to (${to})`, HELP_REF);
  const outside: AuditCheckpoint[] = [];
  for (const file of values.checkpoint ?? []) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (e) {
      throw new UsageError(`--checkpoint ${file}: ${(e as Error).message}`, HELP_REF);
    }
    try {
      outside.push(...parseCheckpoints(text, `--checkpoint ${file}`));
    } catch (e) {
      throw new UsageError((e as Error).message, HELP_REF);
    }
  }
  for (const key of values.key ?? [])
    if (!isAuditPublicKey(key))
      throw new UsageError(
        `--key must be an ed25519 public key, 32 bytes in base64url; got ${JSON.stringify(key)}`,
        HELP_REF,
      );

  const source = values.store !== undefined ? await storeSource(values.store) : apiSource(apiClientFrom(values));
  try {
    const genesis = await source.genesis();
    // Checked here so the message names the flag, not the route's query parameter or a missing link.
    const head = from === undefined ? 0 : await source.head();
    if (from !== undefined && from > head)
      throw new UsageError(`--from ${from} is beyond the newest event (${head})`, HELP_REF);
    const storedLink = from === undefined ? undefined : await source.linkAt(from - 1);
    let started: ReturnType<typeof chainStart>;
    try {
      started = chainStart(from, genesis, storedLink);
    } catch (e) {
      throw new UsageError(`--from ${from}: ${(e as Error).message}`, HELP_REF);
    }
    const { start, note } = started;
    if (note !== undefined) console.error(`note: ${note}`);
    if ((values.key ?? []).length === 0 && outside.length === 0)
      console.error(
        "note: no --key and no --checkpoint: the checkpoints checked are the store's own, under whatever key signed them",
      );
    const verdict = await verifyChain({
      genesis,
      ...(start === undefined ? {} : { start }),
      rows: source.rows(start?.afterPosition ?? 0, to),
      ...(to === undefined ? {} : { to }),
      checkpoints: distinctCheckpoints([...(await source.checkpoints()), ...outside]),
      ...(values.key === undefined ? {} : { trustedKeys: values.key }),
      crypto: nodeChainCrypto,
      ...(values.quiet ? {} : { onProgress: (p, n) => console.error(`checked ${n} events, through position ${p}`) }),
    });
    if (verdict.break === undefined) {
      console.log(verdictSummary(verdict));
      return 0;
    }
    const b = verdict.break;
    const at = b.stream === undefined ? "" : ` (${printable(b.stream)}@${b.revision})`;
    console.log(`BROKEN at position ${b.position}${at}: ${b.kind}: ${printable(b.message)}`);
    console.log(`the chain held through position ${verdict.through} (${verdict.events} events checked)`);
    return 1;
  } finally {
    source.close();
  }
}
