// No Node here: the CLI and the web console (ui/src/audit) verify with this same walk, each with its own crypto.
import { sameBytes as same, toHex as hex } from "./chain-bytes.ts";
import { webChainCrypto, type ChainCrypto } from "./chain-crypto.ts";
import { checkpointSignatureValid, type AuditCheckpoint } from "./checkpoint-signature.ts";
import { LINK_BYTES, linkText, type LinkedFields } from "./link-text.ts";

/** A stored event with the link stored beside it (null: none). */
export interface ChainRow extends LinkedFields {
  readonly link: Uint8Array | null;
}

export interface ChainGenesisRecord {
  /** The first linked event follows this position; the rows up to it are covered by `link`. */
  readonly afterPosition: number;
  /** The rows up to afterPosition chained from ZERO_LINK, as they were when the chain began. */
  readonly link: Uint8Array;
}

export type ChainBreakKind =
  | "edited"
  | "link-edited"
  | "deleted"
  | "reordered"
  | "unlinked"
  | "genesis"
  | "checkpoint-link"
  | "checkpoint-signature"
  | "checkpoint-key"
  | "truncated";

/** The first place where the log is not what was linked (or signed). */
export interface ChainBreak {
  readonly kind: ChainBreakKind;
  readonly position: number;
  readonly stream?: string;
  readonly revision?: number;
  readonly message: string;
}

export interface ChainVerdict {
  readonly ok: boolean;
  /** Events whose link was checked (and, from the beginning, those the genesis covers). */
  readonly events: number;
  /** The last position checked (the start's when none was). */
  readonly through: number;
  /** Checkpoints found consistent with the log, and those outside the range walked. */
  readonly checkpoints: { readonly checked: number; readonly outside: number };
  readonly break?: ChainBreak;
}

export interface VerifyChainInput {
  readonly genesis: ChainGenesisRecord;
  /**
   * Where the walk starts: after this position, from this link (trusted, not checked). Absent:
   * from the store's first event, the genesis's rows included.
   */
  readonly start?: { readonly afterPosition: number; readonly link: Uint8Array };
  /** The rows after the start, in position order (rows past `to` are not read). */
  readonly rows: AsyncIterable<ChainRow>;
  /** The last position to check; absent: to the end of the rows. */
  readonly to?: number;
  readonly checkpoints?: readonly AuditCheckpoint[];
  /** When given, a checkpoint signed by any other key is a break. */
  readonly trustedKeys?: readonly string[];
  readonly onProgress?: (through: number, events: number) => void;
  readonly progressEvery?: number;
  /** Hashes and signature checks; WebCrypto's unless given (the CLI gives Node's faster SHA-256). */
  readonly crypto?: ChainCrypto;
}

/** What the first event of a chain follows: no event, at position 0. */
const ZERO_LINK = new Uint8Array(LINK_BYTES);

/** The event's link: SHA-256 over its link text, from the previous link's bytes. */
const linkOf = (
  crypto: ChainCrypto,
  previous: Uint8Array,
  previousPosition: number,
  e: LinkedFields,
): Uint8Array | Promise<Uint8Array> => crypto.sha256(linkText(hex(previous), previousPosition, e));

/** How far past an unexplained mismatch the walk looks for the bytes that were linked there (a reorder). */
const REORDER_LOOKAHEAD = 10_000;
const PROGRESS_EVERY = 50_000;

const where = (r: ChainRow) => `${r.stream}@${r.revision}`;

/** Reads ahead of the walk without losing what it read. */
class Lookahead {
  private readonly buffered: ChainRow[] = [];
  private readonly it: AsyncIterator<ChainRow>;
  private done = false;
  constructor(
    rows: AsyncIterable<ChainRow>,
    private readonly to: number,
  ) {
    this.it = rows[Symbol.asyncIterator]();
  }
  async peek(k: number): Promise<ChainRow | undefined> {
    while (this.buffered.length <= k && !this.done) {
      const next = await this.it.next();
      if (next.done || next.value.position > this.to) {
        this.done = true;
        await this.it.return?.();
      } else this.buffered.push(next.value);
    }
    return this.buffered[k];
  }
  async next(): Promise<ChainRow | undefined> {
    const row = await this.peek(0);
    if (row !== undefined) this.buffered.shift();
    return row;
  }
  async close(): Promise<void> {
    if (!this.done) {
      this.done = true;
      await this.it.return?.();
    }
  }
}

/**
 * Walks the log in position order, recomputing each event's link from the one before it, and
 * reports the first break: which position, which event, and what differs. It trusts nothing the
 * store says about itself beyond the genesis (or the start it is given) and checkpoints whose
 * signature holds; every link is recomputed from the stored bytes.
 */
export async function verifyChain(input: VerifyChainInput): Promise<ChainVerdict> {
  const { genesis } = input;
  const to = input.to ?? Infinity;
  const rows = new Lookahead(input.rows, to);
  const checkpoints = [...(input.checkpoints ?? [])].sort((a, b) => a.position - b.position);
  const trusted = input.trustedKeys === undefined ? undefined : new Set(input.trustedKeys);
  const every = input.progressEvery ?? PROGRESS_EVERY;
  const crypto = input.crypto ?? webChainCrypto;
  let link: Uint8Array = input.start?.link ?? ZERO_LINK;
  let position = input.start?.afterPosition ?? 0;
  let events = 0;
  let nextCheckpoint = 0;
  let outside = 0;
  let checked = 0;
  // Below the start nothing is checked: checkpoints there are outside the range.
  while (nextCheckpoint < checkpoints.length && checkpoints[nextCheckpoint]!.position <= position) {
    nextCheckpoint++;
    outside++;
  }

  const verdict = (b?: ChainBreak): ChainVerdict => ({
    ok: b === undefined,
    events,
    through: position,
    checkpoints: { checked, outside },
    ...(b === undefined ? {} : { break: b }),
  });

  /** A checkpoint whose signature does not hold, or holds under a key not trusted. */
  const signatureBreak = async (
    c: AuditCheckpoint,
    at: { stream?: string; revision?: number },
  ): Promise<ChainBreak | undefined> => {
    if (!(await checkpointSignatureValid(c, crypto)))
      return {
        kind: "checkpoint-signature",
        position: c.position,
        ...at,
        message: `the checkpoint for position ${c.position} (signed ${c.time}) does not verify under its key ${c.keyId}`,
      };
    if (trusted !== undefined && !trusted.has(c.publicKey))
      return {
        kind: "checkpoint-key",
        position: c.position,
        ...at,
        message: `the checkpoint for position ${c.position} is signed by key ${c.keyId}, which is not one of the keys given`,
      };
    return undefined;
  };

  /** The checkpoints at `position`, against the link the walk holds there. */
  const checkCheckpoints = async (row: ChainRow | undefined): Promise<ChainBreak | undefined> => {
    while (nextCheckpoint < checkpoints.length && checkpoints[nextCheckpoint]!.position <= position) {
      const c = checkpoints[nextCheckpoint++]!;
      const at = row === undefined ? {} : { stream: row.stream, revision: row.revision };
      const unsigned = await signatureBreak(c, at);
      if (unsigned !== undefined) return unsigned;
      if (c.position !== position || c.link !== hex(link))
        return {
          kind: "checkpoint-link",
          position: c.position,
          ...at,
          message:
            c.position !== position
              ? `the checkpoint signed ${c.time} is for position ${c.position}, which the log does not hold (rows were deleted)`
              : `the checkpoint signed ${c.time} holds link ${c.link} at position ${c.position}; ` +
                `the log's events up to there chain to ${hex(link)}: the log was rewritten`,
        };
      checked++;
    }
    return undefined;
  };

  try {
    // The rows stored before the chain began: chained here as the genesis chained them, and compared once, whole.
    if (input.start === undefined && genesis.afterPosition > 0) {
      let first: ChainRow | undefined;
      for (let row = await rows.peek(0); row !== undefined && row.position <= genesis.afterPosition;) {
        first ??= row;
        await rows.next();
        link = await linkOf(crypto, link, position, row);
        position = row.position;
        events++;
        row = await rows.peek(0);
      }
      if (!same(link, genesis.link) || position !== genesis.afterPosition)
        return verdict({
          kind: "genesis",
          position: genesis.afterPosition,
          message:
            `the events up to position ${genesis.afterPosition}, stored before the chain began, are not as they were ` +
            `when it began (their hash differs from the genesis): one of them was changed, removed or added`,
        });
      const broken = await checkCheckpoints(undefined);
      if (broken !== undefined) return verdict(broken);
    } else if (input.start === undefined) {
      link = genesis.link;
      position = genesis.afterPosition;
    }

    for (let row = await rows.next(); row !== undefined; row = await rows.next()) {
      if (row.position !== position + 1) {
        return verdict({
          kind: row.position > position + 1 ? "deleted" : "reordered",
          position: row.position > position + 1 ? position + 1 : row.position,
          stream: row.stream,
          revision: row.revision,
          message:
            row.position > position + 1
              ? `positions ${position + 1}${row.position - 1 > position + 1 ? `–${row.position - 1}` : ""} are missing ` +
                `before ${where(row)} at position ${row.position}: rows were deleted`
              : `position ${row.position} (${where(row)}) comes after position ${position}`,
        });
      }
      if (row.link === null)
        return verdict({
          kind: "unlinked",
          position: row.position,
          stream: row.stream,
          revision: row.revision,
          message: `position ${row.position} (${where(row)}) carries no link: it was written around Shoal's writer, or its link was removed`,
        });
      const expected = await linkOf(crypto, link, position, row);
      if (!same(expected, row.link)) return verdict(await explain(crypto, row, expected, link, position, rows));
      link = row.link;
      position = row.position;
      events++;
      const broken = await checkCheckpoints(row);
      if (broken !== undefined) return verdict(broken);
      if (input.onProgress !== undefined && events % every === 0) input.onProgress(position, events);
    }
    // Checkpoints past the end: what they signed is gone from the log's end.
    if (to === Infinity && nextCheckpoint < checkpoints.length) {
      const c = checkpoints[nextCheckpoint]!;
      return verdict(
        (await signatureBreak(c, {})) ?? {
          kind: "truncated",
          position: position + 1,
          message:
            `the checkpoint signed ${c.time} covers position ${c.position}, but the log ends at ${position}: ` +
            `events were removed from its end`,
        },
      );
    }
    outside += checkpoints.length - nextCheckpoint;
    return verdict();
  } finally {
    await rows.close();
  }
}

/** Why a row's link is not the one its bytes and the link before it make. */
async function explain(
  crypto: ChainCrypto,
  row: ChainRow,
  expected: Uint8Array,
  previous: Uint8Array,
  previousPosition: number,
  rows: Lookahead,
): Promise<ChainBreak> {
  const at = { position: row.position, stream: row.stream, revision: row.revision };
  const next = await rows.peek(0);
  if (
    next?.link != null &&
    next.position === row.position + 1 &&
    same(await linkOf(crypto, expected, row.position, next), next.link)
  )
    return {
      kind: "link-edited",
      ...at,
      message: `the link stored at position ${row.position} (${where(row)}) was changed; the event's bytes are as they were linked`,
    };
  // The bytes linked here may have moved: a later row whose bytes, put at this position, make this link (or its own).
  for (let k = 0; k < REORDER_LOOKAHEAD; k++) {
    const later = await rows.peek(k);
    if (later === undefined) break;
    const moved = await linkOf(crypto, previous, previousPosition, { ...later, position: row.position });
    if (same(moved, row.link!) || (later.link !== null && same(moved, later.link)))
      return {
        kind: "reordered",
        ...at,
        message:
          `the event linked at position ${row.position} is now at position ${later.position} (${where(later)}), ` +
          `and position ${row.position} holds ${where(row)}: rows were reordered`,
      };
  }
  const chains = next?.link != null && same(await linkOf(crypto, row.link!, row.position, next), next.link);
  return {
    kind: "edited",
    ...at,
    message: chains
      ? `the event at position ${row.position} (${where(row)}) was changed after it was linked ` +
        `(its stored link still chains to the next event; its bytes no longer make that link)`
      : `the event at position ${row.position} (${where(row)}) or its link was changed after it was linked`,
  };
}

/** What a walk that found no break says: how many events, through where, and the checkpoints it matched. */
export function verdictSummary(v: ChainVerdict): string {
  const { checked, outside } = v.checkpoints;
  const signed =
    `${checked} signed checkpoint${checked === 1 ? "" : "s"} matched` +
    (outside > 0 ? `, ${outside} outside the range` : "");
  return `the chain holds: ${v.events} events checked through position ${v.through}; ${signed}`;
}

/**
 * Where a walk from `from` starts: after from−1, from the link stored there (which the walk
 * then trusts, and says so). From the genesis or before it, the whole log is walked from its first
 * event, since the rows the genesis covers can only be checked together.
 */
export function chainStart(
  from: number | undefined,
  genesis: ChainGenesisRecord,
  storedLink: Uint8Array | null | undefined,
): { start?: { afterPosition: number; link: Uint8Array }; note?: string } {
  if (from === undefined || from <= 1) return {};
  if (from - 1 < genesis.afterPosition)
    return {
      note:
        `the events up to position ${genesis.afterPosition} were stored before the chain began and are checked ` +
        "together: the walk starts at the first event",
    };
  if (from - 1 === genesis.afterPosition)
    return { start: { afterPosition: genesis.afterPosition, link: genesis.link } };
  if (storedLink === undefined || storedLink === null)
    throw new Error(`position ${from - 1} holds no linked event to start from; start elsewhere, or from the beginning`);
  return {
    start: { afterPosition: from - 1, link: storedLink },
    note: `starting at position ${from}, the link stored at position ${from - 1} is trusted; walk from the beginning to check it too`,
  };
}
