import { copyFile, link, mkdir, readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "pino";
import type { EventStore } from "../events/store/event-store.ts";
import {
  READABLE_FORMATS,
  readNodeStateSnapshot,
  SNAPSHOT_FORMAT_VERSION,
  type NodeStateSnapshot,
} from "./node-state-snapshot-file.ts";

/** Kept snapshots of the formats this Shoal reads: an older one kept before an upgrade still serves. */
const NAME = new RegExp(`^node-states-v(?:${READABLE_FORMATS.join("|")})-(\\d+)\\.msgpack$`);

/** A kept node-state snapshot: every node's state after the event at `position`. */
export interface AsOfSeed {
  readonly path: string;
  readonly position: number;
}

/**
 * Node-state snapshots kept along the log, so that the node read model as of a past moment is folded from the
 * nearest one before it instead of from the start (docs/audit.md, The cluster as of a moment). Each is the snapshot
 * the live read model wrote (NodeStateSnapshotter), linked under its position when written; past `max` of them the
 * one closest to its predecessor goes, so the first and the newest stay and the rest spread over the log.
 */
export class AsOfSeeds {
  constructor(
    readonly dir: string,
    private readonly max: number,
    private readonly logger: Logger,
  ) {}

  static dirOf(dataDir: string): string {
    return join(dataDir, "snapshots", "as-of");
  }

  /** After the snapshot at `position` was written to `path` (never throws: a seed missed only costs a longer fold). */
  async keep(path: string, position: number): Promise<void> {
    if (this.max <= 0) return;
    const target = join(this.dir, `node-states-v${SNAPSHOT_FORMAT_VERSION}-${position}.msgpack`);
    try {
      await mkdir(this.dir, { recursive: true });
      try {
        // The live file is replaced by a rename on its next write: the link keeps this one's bytes.
        await link(path, target);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === "EEXIST") return;
        await copyFile(path, target);
      }
      await this.thin();
    } catch (err) {
      this.logger.warn({ err, path: target, position }, "could not keep the node-state snapshot for as-of questions");
    }
  }

  /** The kept snapshot nearest at or before `position`, if any. */
  async nearest(position: number): Promise<AsOfSeed | undefined> {
    let best: AsOfSeed | undefined;
    for (const seed of await this.list())
      if (seed.position <= position && (best === undefined || seed.position > best.position)) best = seed;
    return best;
  }

  /**
   * The kept snapshot nearest at or before `position`, read and checked against `store` (readNodeStateSnapshot); one
   * that does not hold (damaged, of another store) is logged and not used: the fold then starts further back.
   */
  async load(position: number, store: EventStore): Promise<NodeStateSnapshot | undefined> {
    const seed = await this.nearest(position);
    if (seed === undefined) return undefined;
    const loaded = await readNodeStateSnapshot(seed.path, store);
    // A file its name does not describe would answer for another moment than the one asked.
    const reason =
      "reason" in loaded
        ? loaded.reason
        : loaded.snapshot.position === seed.position
          ? undefined
          : `it holds position ${loaded.snapshot.position}, not the ${seed.position} its name says`;
    if (reason === undefined && "snapshot" in loaded) return loaded.snapshot;
    this.logger.warn({ path: seed.path, reason }, "a kept node-state snapshot was not used");
    return undefined;
  }

  /** Every kept snapshot, oldest first. */
  async list(): Promise<AsOfSeed[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw e;
    }
    return names
      .flatMap((name) => {
        const m = NAME.exec(name);
        return m === null ? [] : [{ path: join(this.dir, name), position: Number(m[1]) }];
      })
      .sort((a, b) => a.position - b.position);
  }

  private async thin(): Promise<void> {
    const seeds = await this.list();
    while (seeds.length > this.max) {
      // Never the first (the oldest moments) nor the newest, unless only they are left.
      let drop = seeds.length <= 2 ? 0 : 1;
      for (let i = 2; i < seeds.length - 1; i++) {
        const gap = (seeds[i] as AsOfSeed).position - (seeds[i - 1] as AsOfSeed).position;
        if (gap < (seeds[drop] as AsOfSeed).position - (seeds[drop - 1] as AsOfSeed).position) drop = i;
      }
      const [gone] = seeds.splice(drop, 1);
      await rm((gone as AsOfSeed).path, { force: true });
    }
  }
}
