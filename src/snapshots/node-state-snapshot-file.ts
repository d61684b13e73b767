import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import { crc32 } from "node:zlib";
import { Packr } from "msgpackr";
import { NODE_STATE_VERSION } from "../../machines/node/node-state.ts";
import type { EventStore } from "../events/store/event-store.ts";
import type { NodeView } from "../projections/node-view.ts";

/** The layout of the file below; a change gets a new file name, so an old file is simply not read. */
export const SNAPSHOT_FORMAT_VERSION = 1;
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
    const slice = Buffer.from(packr.pack(snapshot.views.slice(i, i + SLICE_NODES)));
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
  if (header.formatVersion !== SNAPSHOT_FORMAT_VERSION)
    return {
      reason: `the snapshot's format is version ${String(header.formatVersion)}; this Shoal reads ${SNAPSHOT_FORMAT_VERSION}`,
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
      const slice = packr.unpack(body.subarray(at + 4, at + 4 + length)) as NodeView[];
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
