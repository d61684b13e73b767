import type { NodeState } from "../api/nodes/node-state.ts";
import type { ClusterEvent } from "../projections/cluster-event.ts";
import { timeCell, type CellFormat, type Column } from "./column.ts";
import { eventActor, eventReason } from "./event-actor.ts";
import { shortId } from "./job-cells.ts";
import { formatBytes } from "./format-bytes.ts";
import { UsageError } from "./usage-error.ts";
import { BUILT_IN_LABEL_KEYS } from "../labels/label-rule.ts";

type NodeColumn = Column<NodeState>;

const computeInfo = (n: NodeState) => n.Info.ComputeNodeInfo;

function capacity(key: "CPU" | "Memory" | "Disk" | "GPU"): NodeColumn {
  const fmt = (v: number | undefined) =>
    key === "Memory" || key === "Disk" ? formatBytes(v) : v === undefined ? "-" : String(v);
  return {
    header: key.toUpperCase(),
    cell: (n) => {
      const c = computeInfo(n);
      return c === undefined ? "" : `${fmt(c.AvailableCapacity[key])} / ${fmt(c.MaxCapacity[key])}`;
    },
  };
}

const names = (pick: (c: NonNullable<NodeState["Info"]["ComputeNodeInfo"]>) => readonly string[]) => (n: NodeState) => {
  const c = computeInfo(n);
  return c === undefined ? "" : pick(c).join(" ");
};

/**
 * Bacalhau's `node list --show` groups (cmd/cli/node/columns.go), with their columns. The labels a node reports
 * about itself (BUILT_IN_LABEL_KEYS) are left out of LABELS: the ID column and the version group have them.
 */
const BUILT_IN: ReadonlySet<string> = new Set(BUILT_IN_LABEL_KEYS);

export const NODE_COLUMN_GROUPS: Readonly<Record<string, readonly NodeColumn[]>> = {
  labels: [
    {
      header: "LABELS",
      cell: (n) =>
        Object.entries(n.Info.Labels)
          .filter(([k]) => !BUILT_IN.has(k))
          .map(([k, v]) => `${k}=${v}`)
          .join(","),
    },
  ],
  version: [
    { header: "VERSION", cell: (n) => n.Info.BacalhauVersion.GitVersion },
    { header: "ARCHITECTURE", cell: (n) => n.Info.BacalhauVersion.GOARCH },
    { header: "OS", cell: (n) => n.Info.BacalhauVersion.GOOS },
  ],
  features: [
    { header: "ENGINES", cell: names((c) => c.ExecutionEngines) },
    { header: "INPUTS FROM", cell: names((c) => c.StorageSources) },
    { header: "OUTPUTS", cell: names((c) => c.Publishers) },
  ],
  capacity: [capacity("CPU"), capacity("Memory"), capacity("Disk"), capacity("GPU")],
};

/** Bacalhau's default `--show`. */
export const DEFAULT_NODE_GROUPS = ["labels", "capacity"] as const;

/**
 * Nomad's word for whether the operator's decisions let a node take placements (else why not): approval, cordon and
 * drain, as placement's gate has them. Health is STATUS's: placement also needs HEALTHY. The orchestrator takes none.
 */
function scheduling(n: NodeState): string {
  if (n.Info.NodeType !== "Compute") return "-";
  if (n.Cordoned) return "cordoned";
  return n.Membership !== "APPROVED" || n.Drain !== undefined ? "ineligible" : "eligible";
}

/** "draining until <deadline>", "drained", "expired (2 left)", or empty. */
function drainCell(n: NodeState, format: CellFormat): string {
  const d = n.Drain;
  if (d === undefined) return "";
  if (d.Status === "draining") {
    const deadline = timeCell(d.Deadline);
    return `draining until ${deadline instanceof Date ? format.time(deadline) : deadline}`;
  }
  return d.Status === "expired" ? `expired (${d.Left ?? 0} left)` : "drained";
}

const FIRST: readonly NodeColumn[] = [
  { header: "ID", cell: (n, { full }) => (full ? n.Info.NodeID : shortId(n.Info.NodeID)) },
  { header: "TYPE", cell: (n) => n.Info.NodeType },
  { header: "APPROVAL", cell: (n) => n.Membership },
  { header: "STATUS", cell: (n) => n.Health },
  { header: "SCHEDULING", cell: scheduling },
  { header: "HOSTNAME", cell: (n) => n.Info.Hostname, wide: true },
];

const LAST: readonly NodeColumn[] = [
  { header: "DRAIN", cell: drainCell },
  { header: "LAST HEARTBEAT", cell: (n) => timeCell(n.ConnectionState.LastHeartbeat), wide: true },
];

/**
 * `--show` (comma lists, may repeat; `--show ''` for none): the groups named, in that order. Without it, Bacalhau's
 * default groups, or every group for wide output. An unknown group is a usage error naming the valid ones.
 */
export function nodeColumns(show: readonly string[] | undefined, wide: boolean, help: string): NodeColumn[] {
  const groups =
    show === undefined
      ? wide
        ? Object.keys(NODE_COLUMN_GROUPS)
        : [...DEFAULT_NODE_GROUPS]
      : show
          .flatMap((s) => s.split(","))
          .map((g) => g.trim())
          .filter((g) => g !== "");
  const valid = Object.keys(NODE_COLUMN_GROUPS);
  for (const group of groups)
    if (!Object.hasOwn(NODE_COLUMN_GROUPS, group))
      throw new UsageError(`--show takes column groups among ${valid.join(", ")}, got ${JSON.stringify(group)}`, help);
  const unique = [...new Set(groups)];
  return [...FIRST, ...unique.flatMap((g) => NODE_COLUMN_GROUPS[g] ?? []), ...LAST];
}

/** `shoal node history`: every event of one node; wide adds where each is stored and its id. */
export const NODE_HISTORY_COLUMNS: readonly Column<ClusterEvent>[] = [
  { header: "POSITION", cell: (e) => String(e.position), wide: true },
  { header: "REV", cell: (e) => String(e.revision) },
  { header: "TIME", cell: (e) => timeCell(e.time) },
  { header: "EVENT", cell: (e) => e.type },
  { header: "BY", cell: eventActor },
  { header: "REASON", cell: eventReason },
  { header: "EVENT ID", cell: (e) => e.id, wide: true },
];
