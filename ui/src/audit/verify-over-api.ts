import { fromHex } from "../../../src/events/chain/chain-bytes.ts";
import { distinctCheckpoints, type AuditCheckpoint } from "../../../src/events/chain/checkpoint-signature.ts";
import { verifyChain, type ChainRow, type ChainVerdict } from "../../../src/events/chain/verify-chain.ts";
import { chainCheckpoints, chainGenesis, chainRows } from "../api/audit-endpoints.ts";
import type { ApiClient } from "../api/client.ts";

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
