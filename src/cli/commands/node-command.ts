import { parseArgs } from "node:util";
import { parseDuration } from "../../config/duration.ts";
import type { NodeState } from "../../api/nodes/node-state.ts";
import type { ClusterEvent } from "../../projections/cluster-event.ts";
import type { ApiClient } from "../api-client.ts";
import { API_OPTIONS, apiClientFrom } from "../api-client-from-flags.ts";
import { AS_OF_OPTIONS, asOfQuery, printAsOfHeading } from "../as-of-flags.ts";
import { CONFIG_OPTIONS } from "../config-flags.ts";
import { NODE_HISTORY_COLUMNS, nodeColumns } from "../node-columns.ts";
import { outputFormat, print, printData, type OutputFormat } from "../output-format.ts";
import { OUTPUT_OPTIONS, outputOptions } from "../output-options.ts";
import { printPage } from "../print-page.ts";
import { printable } from "../printable.ts";
import { actOnSelection, SELECTABLE_COMMANDS } from "../node-selection.ts";
import { renderRows } from "../render-rows.ts";
import { UsageError } from "../usage-error.ts";
import { commandHelp } from "../help/command-help.ts";

export const OPTIONS = {
  ...CONFIG_OPTIONS,
  ...API_OPTIONS,
  ...OUTPUT_OPTIONS,
  show: { type: "string", multiple: true },
  "filter-approval": { type: "string" },
  "filter-status": { type: "string" },
  "filter-cordoned": { type: "string" },
  "filter-drain": { type: "string" },
  reason: { type: "string" },
  remove: { type: "string", multiple: true },
  reset: { type: "string", multiple: true },
  "public-key": { type: "string" },
  revoke: { type: "boolean" },
  labels: { type: "string", multiple: true, short: "l" },
  limit: { type: "string" },
  "next-token": { type: "string" },
  "order-by": { type: "string" },
  "order-reversed": { type: "boolean" },
  message: { type: "string", short: "m" },
  deadline: { type: "string" },
  "keep-daemon": { type: "boolean" },
  disable: { type: "boolean" },
  monitor: { type: "boolean" },
  wait: { type: "boolean" },
  yes: { type: "boolean", short: "y" },
  ...AS_OF_OPTIONS,
  watch: { type: "boolean", short: "w" },
  help: { type: "boolean", short: "h" },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>["values"];

const client = (values: Values): ApiClient => apiClientFrom(values);

const output = (values: Values, fallback: "table" | "yaml"): OutputFormat => outputFormat(values.output, fallback);

/** The drain's body from the flags: a bad deadline is a usage error (exit 2), not a request the API refuses. */
function drainBody(values: Values): Record<string, unknown> {
  if (values.disable) {
    if (values.deadline !== undefined || values["keep-daemon"])
      throw new UsageError("shoal node drain --disable takes neither --deadline nor --keep-daemon");
    return { Action: "undrain" };
  }
  if (values.deadline !== undefined) {
    const ms = parseDuration(values.deadline);
    if (ms === undefined || ms <= 0)
      throw new UsageError(`--deadline must be a positive duration like 10m or 1h30m; got ${values.deadline}`);
  }
  return {
    Action: "drain",
    ...(values.deadline === undefined ? {} : { Deadline: values.deadline }),
    ...(values["keep-daemon"] ? { KeepDaemon: true } : {}),
  };
}

/** --reason, or -m/--message as approve and reject take it; not both. */
function reasonOf(values: Values): string | undefined {
  if (values.reason !== undefined && values.message !== undefined)
    throw new UsageError("give the reason once: --reason or -m/--message", "shoal node --help");
  return values.reason ?? values.message;
}

/** `k=v` words: the labels to set (the server checks keys and values). */
function labelWords(words: readonly string[]): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const word of words) {
    const at = word.indexOf("=");
    if (at <= 0)
      throw new UsageError(
        `shoal node label: ${JSON.stringify(word)} is not key=value (use --remove ${word} to hide a label)`,
        "shoal node --help",
      );
    const key = word.slice(0, at);
    if (key in labels) throw new UsageError(`shoal node label: label ${key} is given twice`, "shoal node --help");
    labels[key] = word.slice(at + 1);
  }
  return labels;
}

/** The label command's body from its `k=v` words and --remove/--reset. */
function labelBody(words: readonly string[], values: Values): Record<string, unknown> {
  const set = labelWords(words);
  const remove = values.remove ?? [];
  const reset = values.reset ?? [];
  if (Object.keys(set).length + remove.length + reset.length === 0) {
    throw new UsageError(
      "shoal node label: give labels to set (key=value), --remove KEY or --reset KEY",
      "shoal node --help",
    );
  }
  return {
    Action: "label",
    ...(Object.keys(set).length > 0 ? { Labels: set } : {}),
    ...(remove.length > 0 ? { RemoveLabels: remove } : {}),
    ...(reset.length > 0 ? { ResetLabels: reset } : {}),
  };
}

/** `-l SELECTOR` on an action: the body one id would get, for every matching node (node-selection.ts). */
async function actOnSelected(api: ApiClient, sub: string, values: Values, positionals: string[]): Promise<number> {
  // label's words are k=v; any other word is a node id, which -l replaces.
  if (positionals.some((w) => sub !== "label" || !w.includes("=")))
    throw new UsageError(`shoal node ${sub}: give a node id or -l SELECTOR, not both`, "shoal node --help");
  if (values.monitor || values.wait)
    throw new UsageError("--monitor and --wait follow one node's drain: give its id, not -l", "shoal node --help");
  if (values.output !== undefined)
    throw new UsageError("-l prints each node's result: it takes no --output", "shoal node --help");
  const disable = sub === "drain" && values.disable === true;
  const body = sub === "label" ? labelBody(positionals, values) : sub === "drain" ? drainBody(values) : { Action: sub };
  const labelWords = [
    ...positionals,
    ...(values.remove ?? []).map((k) => `--remove ${k}`),
    ...(values.reset ?? []).map((k) => `--reset ${k}`),
  ];
  const detail =
    sub === "label"
      ? ` (${labelWords.join(" ")})`
      : sub === "drain" && !disable
        ? ` (deadline ${values.deadline ?? "1h"}${values["keep-daemon"] ? ", daemon work kept" : ""})`
        : undefined;
  return actOnSelection(api, {
    selectors: values.labels ?? [],
    command: disable ? "undrain" : sub,
    body,
    detail,
    reason: reasonOf(values),
    yes: values.yes === true,
  });
}

/** Options that only some commands take: any other command given one is a mistake. */
const ONLY_FOR: Record<string, readonly string[]> = {
  "filter-cordoned": ["list"],
  "filter-drain": ["list"],
  watch: ["list"],
  show: ["list", "describe"],
  wide: ["list", "describe", "history"],
  "no-style": ["list", "describe", "history"],
  "hide-header": ["list", "describe", "history"],
  remove: ["label"],
  reset: ["label"],
  "public-key": ["preauthorize"],
  revoke: ["preauthorize"],
  deadline: ["drain"],
  "keep-daemon": ["drain"],
  disable: ["drain"],
  monitor: ["drain"],
  wait: ["drain"],
  labels: ["list", ...SELECTABLE_COMMANDS],
  yes: [...SELECTABLE_COMMANDS],
  "as-of": ["list", "describe"],
  "at-position": ["list", "describe"],
};

function one(positionals: string[], command: string): string {
  const id = positionals[0];
  if (id === undefined || positionals.length !== 1)
    throw new UsageError(
      `shoal node ${command} takes exactly one node id${SELECTABLE_COMMANDS.has(command) ? " (or -l SELECTOR)" : ""}`,
    );
  return id;
}

export async function nodeCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === "-h" || sub === "--help" || sub === "help") {
    console.log(commandHelp("shoal node"));
    return sub === undefined ? 2 : 0;
  }
  const { values, positionals } = parseArgs({ args: rest, options: OPTIONS, allowPositionals: true, strict: true });
  if (values.help) {
    console.log(commandHelp(`shoal node ${sub}`));
    return 0;
  }
  for (const [option, commands] of Object.entries(ONLY_FOR)) {
    if ((values as Record<string, unknown>)[option] !== undefined && !commands.includes(sub)) {
      throw new UsageError(
        `--${option} is an option of shoal node ${commands.join("/")}, not of ${sub}`,
        "shoal node --help",
      );
    }
  }
  const api = client(values);
  if (values.labels !== undefined && SELECTABLE_COMMANDS.has(sub)) return actOnSelected(api, sub, values, positionals);
  const act = async (id: string, body: Record<string, unknown>, what: string): Promise<number> => {
    const format = output(values, "table");
    const reason = reasonOf(values);
    try {
      const res = await api.request<{ Success: boolean; Message?: string }>(
        "PUT",
        `/api/v1/orchestrator/nodes/${encodeURIComponent(id)}`,
        {
          ...body,
          ...(reason === undefined ? {} : { Message: reason }),
        },
      );
      if (format === "table") print(res.Message === undefined ? "Ok" : `Ok: ${res.Message}`);
      else await printData(format, res);
      return 0;
    } catch (e) {
      if (format !== "table") throw e;
      console.error(printable(`Failed to ${what} node ${id}: ${(e as Error).message}`));
      return 1;
    }
  };
  switch (sub) {
    case "list": {
      if (positionals.length > 0) throw new UsageError("shoal node list takes no arguments");
      const shape = outputOptions(values, { fallback: "table", help: "shoal node --help" });
      const columns = nodeColumns(values.show, shape.wide, "shoal node --help");
      const q = new URLSearchParams();
      if (values["filter-approval"]) q.set("filter-approval", values["filter-approval"]);
      if (values["filter-status"]) q.set("filter-status", values["filter-status"]);
      const drain = values["filter-drain"];
      if (drain !== undefined) {
        if (!["draining", "drained", "expired", "none"].includes(drain))
          throw new UsageError(
            `--filter-drain takes draining, drained, expired or none, got ${JSON.stringify(drain)}`,
            "shoal node --help",
          );
        q.set("filter-drain", drain);
      }
      const cordoned = values["filter-cordoned"];
      if (cordoned !== undefined) {
        if (cordoned !== "true" && cordoned !== "false")
          throw new UsageError(
            `--filter-cordoned takes true or false, got ${JSON.stringify(cordoned)}`,
            "shoal node --help",
          );
        q.set("filter-cordoned", cordoned);
      }
      for (const l of values.labels ?? []) q.append("labels", l);
      if (values.limit) q.set("limit", values.limit);
      if (values["next-token"]) q.set("next_token", values["next-token"]);
      if (values["order-by"]) q.set("order_by", values["order-by"]);
      if (values["order-reversed"]) q.set("reverse", "true");
      asOfQuery(values, q, "shoal node --help");
      const page = () =>
        api.request<{ Nodes: NodeState[]; NextToken: string }>("GET", `/api/v1/orchestrator/nodes?${q}`);
      if (values.watch) {
        if (q.has("as_of") || q.has("at_position"))
          throw new UsageError("--watch shows the list as it is now: no --as-of or --at-position", "shoal node --help");
        if (shape.format !== "table")
          throw new UsageError("--watch prints a table (-o table or wide)", "shoal node --help");
        const { watchList } = await import("../watch-list.ts");
        return watchList(api, {
          categories: "node",
          draw: async () => {
            const res = await page();
            return (
              renderRows(columns, res.Nodes, shape) +
              (res.NextToken ? printable(`\n\nMore nodes: --next-token ${res.NextToken}`, { multiline: true }) : "")
            );
          },
        });
      }
      const res = await page();
      if (shape.format === "table") printAsOfHeading(values);
      // An as-of page's token goes on as of the same moment: the hint says so.
      const asOf = q.has("as_of")
        ? ` --as-of ${q.get("as_of")}`
        : q.has("at_position")
          ? ` --at-position ${q.get("at_position")}`
          : "";
      const more = res.NextToken ? `More nodes: --next-token ${res.NextToken}${asOf}` : undefined;
      await printPage(shape, columns, res.Nodes, more, res);
      return 0;
    }
    case "describe": {
      const id = one(positionals, sub);
      const shape = outputOptions(values, { fallback: "yaml", help: "shoal node --help" });
      const columns = nodeColumns(values.show, shape.wide, "shoal node --help");
      const q = new URLSearchParams();
      asOfQuery(values, q, "shoal node --help");
      const query = q.size === 0 ? "" : `?${q}`;
      const res = await api.request<{ Node: NodeState }>(
        "GET",
        `/api/v1/orchestrator/nodes/${encodeURIComponent(id)}${query}`,
      );
      if (shape.format === "table") printAsOfHeading(values);
      await printPage(shape, columns, [res.Node], undefined, res.Node);
      return 0;
    }
    case "approve":
    case "reject":
    case "delete":
    case "cordon":
    case "uncordon":
      return act(one(positionals, sub), { Action: sub }, sub);
    case "label": {
      const [id, ...words] = positionals;
      if (id === undefined)
        throw new UsageError(
          "shoal node label takes a node id, then key=value labels and/or --remove/--reset keys",
          "shoal node --help",
        );
      return act(id, labelBody(words, values), "label");
    }
    case "drain": {
      const id = one(positionals, sub);
      if (values.monitor || values.wait) {
        if (values.disable)
          throw new UsageError("--monitor and --wait follow a drain: not with --disable", "shoal node --help");
        if (values.output !== undefined)
          throw new UsageError("--monitor and --wait take no --output", "shoal node --help");
        const reason = reasonOf(values);
        const { drainAndFollow } = await import("../drain-monitor.ts");
        return drainAndFollow(
          api,
          id,
          { ...drainBody(values), ...(reason === undefined ? {} : { Message: reason }) },
          { mode: values.monitor ? "monitor" : "wait" },
        );
      }
      return act(id, drainBody(values), values.disable ? "undrain" : "drain");
    }
    case "preauthorize": {
      const id = one(positionals, sub);
      if (values.revoke) {
        if (values["public-key"] !== undefined)
          throw new UsageError(
            "--revoke withdraws the node's pre-authorisation: it takes no --public-key",
            "shoal node --help",
          );
        return act(id, { Action: "revoke-preauthorization" }, "revoke the pre-authorisation of");
      }
      return act(
        id,
        { Action: "preauthorize", ...(values["public-key"] === undefined ? {} : { PublicKey: values["public-key"] }) },
        "pre-authorise",
      );
    }
    case "history": {
      const id = one(positionals, sub);
      const shape = outputOptions(values, { fallback: "table", help: "shoal node --help" });
      const q = new URLSearchParams();
      if (values.limit) q.set("limit", values.limit);
      if (values["next-token"]) q.set("next_token", values["next-token"]);
      const res = await api.request<{ Items: ClusterEvent[]; NextToken: string }>(
        "GET",
        `/api/v1/orchestrator/nodes/${encodeURIComponent(id)}/history?${q}`,
      );
      const more = res.NextToken ? `More events: --next-token ${res.NextToken}` : undefined;
      await printPage(shape, NODE_HISTORY_COLUMNS, res.Items, more, res);
      return 0;
    }
    default:
      throw new UsageError(`unknown node command "${sub}"; try shoal node --help`);
  }
}
