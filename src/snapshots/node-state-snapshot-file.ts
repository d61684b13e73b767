import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import { crc32 } from "node:zlib";
import { Packr } from "msgpackr";
import { NODE_STATE_VERSION } from "../../machines/node/node-state.ts";
import type { EventStore } from "../events/store/event-store.ts";
import type { NodeView } from "../projections/node-view.ts";

/**
 * The layout of the file below; a change gets a new file name, so an old live file is simply not read. Version 1 (a
 * slice is its views, each with all of its info) is still read: the as-of snapshots kept along the log may be of it.
 */
export const SNAPSHOT_FORMAT_VERSION = 2;
export const READABLE_FORMATS: readonly number[] = [1, SNAPSHOT_FORMAT_VERSION];
const MAGIC = "shoal-node-states";
/** Nodes per encoded slice: a few milliseconds of work each, with the event loop free in between. */
const SLICE_NODES = 1_000;

/** The last event the snapshot reflects: proves, on load, that the snapshot belongs to this store. */
export interface SnapshotAnchor {
  readonly stream: string;
  readonly revision: number;
  readonly id: string;
}

/** Every node's state (as the read model holds it, with its stream revision) at one store position. */
export interface NodeStateSnapshot {
  /** Every event at or before this position is folded in; none after it. */
  readonly position: number;
  readonly anchor: SnapshotAnchor;
  readonly views: readonly NodeView[];
}

interface Header {
  readonly magic: string;
  readonly formatVersion: number;
  readonly stateVersion: number;
  readonly position: number;
  readonly anchor: SnapshotAnchor;
  readonly count: number;
  readonly bodyBytes: number;
  readonly bodyCrc32: number;
  readonly writtenAt: string;
}

/** The parts of a node's info that many nodes have alike (SharedNodeParts): written once per slice. */
const TABLED = ["Labels", "ComputeNodeInfo", "BacalhauVersion"] as const;

/**
 * A slice as the file holds it: `[parts, views]`, each view's tabled info parts replaced by their index in `parts`.
 * The live views share equal parts (one object each), so a slice of a thousand nodes holds a few dozen parts, not a
 * thousand of each: the file is smaller, decoding it makes one object per part, and seeding the views (NodeViews.seed)
 * shares each part once, not once per node.
 */
function withPartsTable(views: readonly NodeView[]): [unknown[], NodeView[]] {
  const parts: unknown[] = [];
  const indexOf = new Map<unknown, number>();
  const tabled = views.map((view) => {
    const info: Record<string, unknown> = { ...view.info };
    for (const key of TABLED) {
      const part = info[key];
      if (typeof part !== "object" || part === null) continue;
      let index = indexOf.get(part);
      if (index === undefined) {
        index = parts.push(part) - 1;
        indexOf.set(part, index);
      }
      info[key] = index;
    }
    return { ...view, info } as unknown as NodeView;
  });
  return [parts, tabled];
}

/** A version 2 slice's views with their parts put back in place (the decoded objects are this reader's own). */
function fromPartsTable(slice: unknown): NodeView[] {
  if (!Array.isArray(slice) || slice.length !== 2 || !Array.isArray(slice[0]) || !Array.isArray(slice[1]))
    throw new Error("a slice is not a parts table and its views");
  const [parts, views] = slice as [unknown[], NodeView[]];
  for (const view of views) {
    const info = view?.info as Record<string, unknown> | undefined;
    if (typeof info !== "object" || info === null) continue;
    for (const key of TABLED) {
      const index = info[key];
      if (index === undefined) continue;
      if (!Number.isInteger(index) || (index as number) < 0 || (index as number) >= parts.length)
        throw new Error(`a node's ${key} names no part of its slice`);
      info[key] = parts[index as number];
    }
  }
  return views;
}

export function nodeStateSnapshotPath(dataDir: string): string {
  return join(dataDir, "snapshots", `node-states-v${SNAPSHOT_FORMAT_VERSION}.msgpack`);
}

// Records: every view has the same keys, written once per slice instead of once per node.
const newPackr = () => new Packr({ useRecords: true, mapsAsObjects: true });

function lengthPrefix(length: number): Uint8Array {
  const prefix = Buffer.alloc(4);
  prefix.writeUInt32BE(length);
  return prefix;
}

export interface EncodedSnapshot {
  readonly chunks: readonly Uint8Array[];
  readonly bytes: number;
  /** The longest the event loop was held by one slice. */
  readonly longestSliceMs: number;
  /**
   * The time spent in the slices: the encoding's own work. The wall time also counts whatever the event loop ran
   * between them (requests, the rest of a start-up, collections), which can be several times as long.
   */
  readonly slicesMs: number;
}

/**
 * The file's bytes: a length-prefixed header (versions, position, anchor, node count, the
 * body's length and CRC-32), then the body: length-prefixed MessagePack slices of views.
 * Encodes slice by slice, yielding to the event loop in between.
 */
export async function encodeNodeStateSnapshot(
  snapshot: NodeStateSnapshot,
  writtenAt: string,
): Promise<EncodedSnapshot> {
  const packr = newPackr();
  const body: Uint8Array[] = [];
  let bodyBytes = 0;
  let bodyCrc32 = 0;
  let longestSliceMs = 0;
  let slicesMs = 0;
  for (let i = 0; i < snapshot.views.length; i += SLICE_NODES) {
    const started = performance.now();
    // A copy: pack() reuses its buffer.
    const slice = Buffer.from(packr.pack(withPartsTable(snapshot.views.slice(i, i + SLICE_NODES))));
    const prefix = lengthPrefix(slice.length);
    bodyCrc32 = crc32(slice, crc32(prefix, bodyCrc32));
    body.push(prefix, slice);
    bodyBytes += prefix.length + slice.length;
    const sliceMs = performance.now() - started;
    longestSliceMs = Math.max(longestSliceMs, sliceMs);
    slicesMs += sliceMs;
    await yieldToEventLoop();
  }
  const header: Header = {
    magic: MAGIC,
    formatVersion: SNAPSHOT_FORMAT_VERSION,
    stateVersion: NODE_STATE_VERSION,
    position: snapshot.position,
    anchor: snapshot.anchor,
    count: snapshot.views.length,
    bodyBytes,
    bodyCrc32,
    writtenAt,
  };
  const head = Buffer.from(newPackr().pack(header));
  return {
    chunks: [lengthPrefix(head.length), head, ...body],
    bytes: 4 + head.length + bodyBytes,
    longestSliceMs,
    slicesMs,
  };
}

/** A snapshot to start from, or why there is none (start-up then replays every stream). */
export type SnapshotLoad = { readonly snapshot: NodeStateSnapshot } | { readonly reason: string };

function isAnchor(value: unknown): value is SnapshotAnchor {
  const a = value as SnapshotAnchor | null;
  return (
    typeof a === "object" &&
    a !== null &&
    typeof a.stream === "string" &&
    typeof a.id === "string" &&
    Number.isInteger(a.revision)
  );
}

/**
 * Reads and checks a snapshot: its versions, its CRC, its node count, and that the event it
 * ends with is still in the store at that position (not a snapshot of another store, nor of
 * one since replaced). Never throws: anything wrong is a reason to replay in full.
 */
export async function readNodeStateSnapshot(path: string, store: EventStore): Promise<SnapshotLoad> {
  let file: Buffer;
  try {
    file = await readFile(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return { reason: code === "ENOENT" ? "no snapshot yet" : `the snapshot cannot be read: ${(e as Error).message}` };
  }
  let header: Header;
  let bodyStart: number;
  try {
    const headLength = file.readUInt32BE(0);
    bodyStart = 4 + headLength;
    header = newPackr().unpack(file.subarray(4, bodyStart)) as Header;
  } catch (e) {
    return { reason: `the snapshot is corrupt: its header cannot be decoded (${(e as Error).message})` };
  }
  if (typeof header !== "object" || header === null || header.magic !== MAGIC)
    return { reason: "the snapshot is corrupt: not a node-state snapshot" };
  if (!READABLE_FORMATS.includes(header.formatVersion))
    return {
      reason:
        `the snapshot's format is version ${String(header.formatVersion)}; ` +
        `this Shoal reads ${READABLE_FORMATS.join(" and ")}`,
    };
  if (header.stateVersion !== NODE_STATE_VERSION) {
    return {
      reason: `the snapshot holds node states of version ${String(header.stateVersion)}; this Shoal's are version ${NODE_STATE_VERSION}`,
    };
  }
  if (
    !Number.isFinite(header.position) ||
    header.position <= 0 ||
    !isAnchor(header.anchor) ||
    !Number.isInteger(header.count)
  ) {
    return { reason: "the snapshot is corrupt: its header is incomplete" };
  }
  const body = file.subarray(bodyStart);
  if (body.length !== header.bodyBytes || crc32(body) !== header.bodyCrc32)
    return { reason: "the snapshot is corrupt: its content does not match its checksum" };

  const views: NodeView[] = [];
  const packr = newPackr();
  try {
    for (let at = 0; at < body.length;) {
      const length = body.readUInt32BE(at);
      const decoded: unknown = packr.unpack(body.subarray(at + 4, at + 4 + length));
      const slice = header.formatVersion === 1 ? (decoded as NodeView[]) : fromPartsTable(decoded);
      for (const view of slice) views.push(view);
      at += 4 + length;
      // Start-up has timers too (the stall watch, NATS pings): decoding never holds them long.
      await yieldToEventLoop();
    }
  } catch (e) {
    return { reason: `the snapshot is corrupt: ${(e as Error).message}` };
  }
  if (
    views.length !== header.count ||
    views.some((v) => typeof v?.nodeId !== "string" || !Number.isInteger(v.revision))
  ) {
    return { reason: "the snapshot is corrupt: its nodes do not match its header" };
  }

  const { anchor, position } = header;
  let found;
  try {
    [found] = await store.readStream(anchor.stream, { fromRevision: anchor.revision, maxCount: 1 });
  } catch (e) {
    return { reason: `the store could not confirm the snapshot: ${(e as Error).message}` };
  }
  if (found?.id !== anchor.id || found.position !== position) {
    return {
      reason: `the snapshot does not belong to this store: event ${anchor.stream}@${anchor.revision} at position ${position} is not there`,
    };
  }
  return { snapshot: { position, anchor, views } };
}
