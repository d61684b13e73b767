import { parseArgs } from "node:util";
import { parseDuration } from "../../config/duration.ts";
import type { NodeState } from "../../api/nodes/node-state.ts";
import type { ClusterEvent } from "../../projections/cluster-event.ts";
import type { ApiClient } from "../api-client.ts";
import { apiClientFrom } from "../api-client-from-flags.ts";
import { CONFIG_OPTIONS } from "../config-flags.ts";
import { outputFormat, print, printData, type OutputFormat } from "../output-format.ts";
import { printable } from "../printable.ts";
import { formatBytes, formatTable } from "../table.ts";
import { UsageError } from "../usage-error.ts";

export const NODE_HELP = `Usage: shoal node <command> [options]

Commands:
  list                     list nodes
  describe <id>            show one node (id or unique prefix)
  approve <id>             approve a PENDING or REJECTED node
  reject <id> [-m reason]  reject a PENDING or APPROVED node
  delete <id>              remove a node (its history stays)
  drain <id>               take no new work; move batch and service work elsewhere, let ops work
                           finish, stop daemon work at the end; what is left at the deadline is stopped
  drain <id> --disable     end a drain under way, or let a drained node take work again
  history <id>             every event of a node, oldest first

Options:
  --api-host HOST          API host (env SHOAL_API_HOST; default 127.0.0.1)
  --api-port PORT          API port (env SHOAL_API_PORT; default 1234)
  --api-key KEY            API key (env SHOAL_API_KEY)
  --username USER          Basic auth user (env SHOAL_API_USERNAME); with --password (env SHOAL_API_PASSWORD)
                           Without these: the admin key \`serve\` keeps in <DataDir>/credentials/api-admin-key
                           (or <DataDir>/devstack/credentials/… for \`devstack\`) when this machine has one,
                           sent only when --api-host is this machine (127.0.0.0/8, ::1, localhost)
  --output table|json|yaml output format (default table; describe defaults to yaml)
  list: --filter-approval pending|approved|rejected  --filter-status healthy|unhealthy|unknown|connected|disconnected
        --labels SELECTOR  --limit N  --next-token T  --order-by id|type|approval|status|available_cpu|...  --order-reversed
  history: --limit N  --next-token T
  drain: --deadline DURATION (Go duration, default 1h)  --keep-daemon (leave daemon work running)  --disable
  -m, --message TEXT       reason, recorded in the node's history (approve, reject, delete, drain); also --reason`;

const OPTIONS = {
  ...CONFIG_OPTIONS,
  "api-host": { type: "string" },
  "api-port": { type: "string" },
  "api-key": { type: "string" },
  username: { type: "string" },
  password: { type: "string" },
  output: { type: "string" },
  "filter-approval": { type: "string" },
  "filter-status": { type: "string" },
  labels: { type: "string", multiple: true },
  limit: { type: "string" },
  "next-token": { type: "string" },
  "order-by": { type: "string" },
  "order-reversed": { type: "boolean" },
  message: { type: "string", short: "m" },
  reason: { type: "string" },
  deadline: { type: "string" },
  "keep-daemon": { type: "boolean" },
  disable: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>["values"];

const client = (values: Values): ApiClient => apiClientFrom(values);

const output = (values: Values, fallback: "table" | "yaml"): OutputFormat => outputFormat(values.output, fallback);

function capacity(node: NodeState, key: "CPU" | "Memory" | "Disk" | "GPU"): string {
  const c = node.Info.ComputeNodeInfo;
  if (!c) return "";
  const fmt = (v: number | undefined) => (key === "Memory" || key === "Disk" ? formatBytes(v) : v === undefined ? "-" : String(v));
  return `${fmt(c.AvailableCapacity[key])} / ${fmt(c.MaxCapacity[key])}`;
}

function nodeRow(n: NodeState): string[] {
  const labels = Object.entries(n.Info.Labels)
    .filter(([k]) => k !== "Operating-System" && k !== "Architecture")
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
  return [n.Info.NodeID, n.Info.NodeType, n.Membership, n.Health, labels, capacity(n, "CPU"), capacity(n, "Memory"), capacity(n, "Disk"), drainCell(n)];
}

const COLUMNS = ["ID", "TYPE", "APPROVAL", "STATUS", "LABELS", "CPU", "MEMORY", "DISK", "DRAIN"];

/** "draining until <deadline>", "drained", "expired (2 left)", or empty. */
function drainCell(n: NodeState): string {
  const d = n.Drain;
  if (d === undefined) return "";
  if (d.Status === "draining") return `draining until ${d.Deadline}`;
  return d.Status === "expired" ? `expired (${d.Left ?? 0} left)` : "drained";
}

/** The drain's body from the flags: a bad deadline is a usage error (exit 2), not a request the API refuses. */
function drainBody(values: Values): Record<string, unknown> {
  if (values.disable) {
    if (values.deadline !== undefined || values["keep-daemon"]) throw new UsageError("shoal node drain --disable takes neither --deadline nor --keep-daemon");
    return { Action: "undrain" };
  }
  if (values.deadline !== undefined) {
    const ms = parseDuration(values.deadline);
    if (ms === undefined || ms <= 0) throw new UsageError(`--deadline must be a positive duration like 10m or 1h30m; got ${values.deadline}`);
  }
  return { Action: "drain", ...(values.deadline === undefined ? {} : { Deadline: values.deadline }), ...(values["keep-daemon"] ? { KeepDaemon: true } : {}) };
}

function one(positionals: string[], command: string): string {
  const id = positionals[0];
  if (id === undefined || positionals.length !== 1) throw new UsageError(`shoal node ${command} takes exactly one node id`);
  return id;
}

export async function nodeCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === "-h" || sub === "--help" || sub === "help") {
    console.log(NODE_HELP);
    return sub === undefined ? 2 : 0;
  }
  const { values, positionals } = parseArgs({ args: rest, options: OPTIONS, allowPositionals: true, strict: true });
  if (values.help) {
    console.log(NODE_HELP);
    return 0;
  }
  const api = client(values);
  switch (sub) {
    case "list": {
      if (positionals.length > 0) throw new UsageError("shoal node list takes no arguments");
      const format = output(values, "table");
      const q = new URLSearchParams();
      if (values["filter-approval"]) q.set("filter-approval", values["filter-approval"]);
      if (values["filter-status"]) q.set("filter-status", values["filter-status"]);
      for (const l of values.labels ?? []) q.append("labels", l);
      if (values.limit) q.set("limit", values.limit);
      if (values["next-token"]) q.set("next_token", values["next-token"]);
      if (values["order-by"]) q.set("order_by", values["order-by"]);
      if (values["order-reversed"]) q.set("reverse", "true");
      const res = await api.request<{ Nodes: NodeState[]; NextToken: string }>("GET", `/api/v1/orchestrator/nodes?${q}`);
      if (format !== "table") await printData(format, res);
      else {
        print(formatTable(COLUMNS, res.Nodes.map(nodeRow)));
        if (res.NextToken) print(`\nMore nodes: --next-token ${res.NextToken}`);
      }
      return 0;
    }
    case "describe": {
      const id = one(positionals, sub);
      const format = output(values, "yaml");
      const res = await api.request<{ Node: NodeState }>("GET", `/api/v1/orchestrator/nodes/${encodeURIComponent(id)}`);
      if (format === "table") print(formatTable(COLUMNS, [nodeRow(res.Node)]));
      else await printData(format, res.Node);
      return 0;
    }
    case "approve":
    case "reject":
    case "delete":
    case "drain": {
      const id = one(positionals, sub);
      const format = output(values, "table");
      if (sub !== "drain" && (values.deadline !== undefined || values["keep-daemon"] || values.disable)) {
        throw new UsageError(`--deadline, --keep-daemon and --disable go with shoal node drain, not ${sub}`);
      }
      const action = sub === "drain" ? drainBody(values) : { Action: sub };
      const message = values.reason ?? values.message;
      try {
        const res = await api.request<{ Success: boolean }>("PUT", `/api/v1/orchestrator/nodes/${encodeURIComponent(id)}`, {
          ...action,
          ...(message === undefined ? {} : { Message: message }),
        });
        if (format === "table") print("Ok");
        else await printData(format, res);
        return 0;
      } catch (e) {
        if (format !== "table") throw e;
        console.error(printable(`Failed to ${sub} node ${id}: ${(e as Error).message}`));
        return 1;
      }
    }
    case "history": {
      const id = one(positionals, sub);
      const format = output(values, "table");
      const q = new URLSearchParams();
      if (values.limit) q.set("limit", values.limit);
      if (values["next-token"]) q.set("next_token", values["next-token"]);
      const res = await api.request<{ Items: ClusterEvent[]; NextToken: string }>(
        "GET",
        `/api/v1/orchestrator/nodes/${encodeURIComponent(id)}/history?${q}`,
      );
      if (format !== "table") await printData(format, res);
      else {
        const rows = res.Items.map((e) => {
          const actor = e.metadata.actor as { type?: string; id?: string } | undefined;
          return [String(e.revision), e.time, e.type, `${actor?.type ?? "?"}:${actor?.id ?? "?"}`, String(e.metadata.reason ?? "")];
        });
        print(formatTable(["REV", "TIME", "EVENT", "BY", "REASON"], rows));
        if (res.NextToken) print(`\nMore events: --next-token ${res.NextToken}`);
      }
      return 0;
    }
    default:
      throw new UsageError(`unknown node command "${sub}"; try shoal node --help`);
  }
}
