import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { crc32 } from "node:zlib";
import { EXECUTION_STATE_VERSION, type ExecutionState } from "../../machines/execution/execution-state.ts";
import { JOB_STATE_VERSION, type JobState } from "../../machines/job/job-state.ts";
import type { EventStore } from "../events/store/event-store.ts";
import type { ExecutionsByNodeSnapshot } from "../projections/jobs/executions-by-node.ts";
import { writeFileAtomicAsync } from "../fs/write-file-atomic.ts";

/** The file's layout; a change gets a new file name, so an old file is simply not read. */
const FORMAT_VERSION = 2;
const MAGIC = "shoal-job-views";

/**
 * The last event the job read model had handled (of any category): proves on load that the snapshot belongs to this
 * store.
 */
export interface JobViewsAnchor {
  readonly position: number;
  readonly stream: string;
  readonly revision: number;
  readonly id: string;
}

/** Every job's and execution's state as the read model holds them, after every event up to `anchor.position`. */
export interface JobViewsSnapshot {
  readonly anchor: JobViewsAnchor;
  readonly jobs: readonly JobState[];
  readonly executions: readonly ExecutionState[];
  /** The executions lost with each node and those nodes' returns (node events: not in the executions' states). */
  readonly byNode: ExecutionsByNodeSnapshot;
}

interface FileContent extends JobViewsSnapshot {
  readonly magic: string;
  readonly formatVersion: number;
  readonly jobStateVersion: number;
  readonly executionStateVersion: number;
}

export function jobViewsSnapshotPath(dataDir: string): string {
  return join(dataDir, "snapshots", `job-views-v${FORMAT_VERSION}.json`);
}

/** JSON, then a newline and the CRC-32 of the JSON: a torn or edited file is never taken for a snapshot. */
export async function writeJobViewsSnapshot(path: string, snapshot: JobViewsSnapshot): Promise<void> {
  const content: FileContent = {
    magic: MAGIC,
    formatVersion: FORMAT_VERSION,
    jobStateVersion: JOB_STATE_VERSION,
    executionStateVersion: EXECUTION_STATE_VERSION,
    ...snapshot,
  };
  const json = Buffer.from(JSON.stringify(content));
  await writeFileAtomicAsync(path, [json, Buffer.from(`\n${crc32(json)}\n`)], 0o600);
}

export type JobViewsLoad = { readonly snapshot: JobViewsSnapshot } | { readonly reason: string };

/**
 * Reads and checks a snapshot: its versions, its checksum, and that the event it ends with is
 * still in the store at that position (not another store's, nor one since replaced). Never
 * throws: anything wrong is a reason to fold the store from its start.
 */
export async function readJobViewsSnapshot(path: string, store: EventStore): Promise<JobViewsLoad> {
  let file: string;
  try {
    file = await readFile(path, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return { reason: code === "ENOENT" ? "no snapshot yet" : `the snapshot cannot be read: ${(e as Error).message}` };
  }
  const lines = file.split("\n");
  const json = lines[0] ?? "";
  if (lines.length !== 3 || lines[2] !== "" || String(crc32(Buffer.from(json))) !== lines[1])
    return { reason: "the snapshot is corrupt: its content does not match its checksum" };
  let content: FileContent;
  try {
    content = JSON.parse(json) as FileContent;
  } catch (e) {
    return { reason: `the snapshot is corrupt: ${(e as Error).message}` };
  }
  if (content?.magic !== MAGIC || content.formatVersion !== FORMAT_VERSION)
    return { reason: "not a job-views snapshot of this format" };
  if (content.jobStateVersion !== JOB_STATE_VERSION || content.executionStateVersion !== EXECUTION_STATE_VERSION) {
    return { reason: "the snapshot holds job or execution states of another version" };
  }
  const a = content.anchor;
  if (
    !Array.isArray(content.jobs) ||
    !Array.isArray(content.executions) ||
    !Array.isArray(content.byNode?.lost) ||
    !Array.isArray(content.byNode.returns) ||
    typeof a?.stream !== "string" ||
    typeof a.id !== "string" ||
    !Number.isInteger(a.revision) ||
    !(a.position > 0)
  ) {
    return { reason: "the snapshot is corrupt: it is incomplete" };
  }
  let anchored;
  try {
    anchored = (await store.readStream(a.stream, { fromRevision: a.revision, maxCount: 1 }))[0];
  } catch (e) {
    return { reason: `the store cannot be read to check the snapshot: ${(e as Error).message}` };
  }
  if (anchored === undefined || anchored.id !== a.id || anchored.position !== a.position)
    return { reason: "the snapshot is of another store: its last event is not in this one" };
  return { snapshot: { anchor: a, jobs: content.jobs, executions: content.executions, byNode: content.byNode } };
}
