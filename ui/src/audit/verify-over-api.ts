/**
 * The console's chain verification, loaded (import()) on the audit page's Verify only: no other page carries it.
 */
import { fromHex } from "../../../src/events/chain/chain-bytes.ts";
import {
  distinctCheckpoints,
  isAuditPublicKey,
  type AuditCheckpoint,
} from "../../../src/events/chain/checkpoint-signature.ts";
import { parseCheckpoints } from "../../../src/events/chain/parse-checkpoints.ts";
import { verifyChain, type ChainRow, type ChainVerdict } from "../../../src/events/chain/verify-chain.ts";
import { chainCheckpoints, chainGenesis, chainRows } from "../api/audit-endpoints.ts";
import type { ApiClient } from "../api/client.ts";

export { verdictSummary } from "../../../src/events/chain/verify-chain.ts";

/** The keys typed (any whitespace or commas between), each checked to be one; throws naming the first that is not. */
export function trustedKeysOf(text: string): string[] {
  const keys = text.split(/[\s,]+/).filter((k) => k !== "");
  const bad = keys.find((k) => !isAuditPublicKey(k));
  if (bad !== undefined)
    throw new Error(`a trusted key is an ed25519 public key, 32 bytes in base64url; got ${JSON.stringify(bad)}`);
  return keys;
}

/** The checkpoints pasted, one a line (none when the box is empty); throws on one that is not a checkpoint. */
export const outsideCheckpointsOf = (text: string): AuditCheckpoint[] =>
  text.trim() === "" ? [] : parseCheckpoints(text, "Checkpoints kept outside");

/** How often the walk says how far it got. */
const PROGRESS_EVERY = 1000;

async function* linkedRows(client: ApiClient, signal: AbortSignal): AsyncGenerator<ChainRow> {
  // A link that is not hex cannot be the one the bytes make: empty, it is reported where it is.
  for await (const r of chainRows(client, 0, signal))
    yield { ...r, link: r.link === null ? null : (fromHex(r.link) ?? new Uint8Array()) };
}

/**
 * `shoal audit verify` in the browser: the orchestrator hands over its genesis, rows with their links and its
 * checkpoints; every link is recomputed and every signature checked here (WebCrypto), so the verdict is not the
 * audited server's word. `outside`: checkpoints kept elsewhere; `trustedKeys`: with any, another key is a break.
 */
export async function verifyOverApi(
  client: ApiClient,
  options: {
    readonly trustedKeys: readonly string[];
    readonly outside: readonly AuditCheckpoint[];
    readonly signal: AbortSignal;
    readonly onProgress: (through: number, events: number) => void;
  },
): Promise<ChainVerdict> {
  const [genesis, stored] = await Promise.all([chainGenesis(client), chainCheckpoints(client)]);
  return verifyChain({
    genesis: { afterPosition: genesis.AfterPosition, link: fromHex(genesis.Link) ?? new Uint8Array() },
    rows: linkedRows(client, options.signal),
    checkpoints: distinctCheckpoints([...stored, ...options.outside]),
    ...(options.trustedKeys.length === 0 ? {} : { trustedKeys: options.trustedKeys }),
    onProgress: options.onProgress,
    progressEvery: PROGRESS_EVERY,
  });
}
