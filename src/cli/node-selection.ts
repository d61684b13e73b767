import { createInterface } from "node:readline/promises";
import type { NodeState } from "../api/nodes/node-state.ts";
import { LabelSelectorError, parseLabelSelector } from "../labels/label-selector.ts";
import type { ApiClient } from "./api-client.ts";
import { print, printError } from "./output-format.ts";
import { printable } from "./printable.ts";
import { formatTable } from "./table.ts";
import { UsageError } from "./usage-error.ts";

const HELP_REF = "shoal node --help";

/** The node commands that take `-l SELECTOR` instead of an id, as kubectl's cordon, drain and label do. */
export const SELECTABLE_COMMANDS: ReadonlySet<string> = new Set(["approve", "cordon", "uncordon", "drain", "label"]);

export interface SelectionAction {
  /** The `-l`/`--labels` values: one selector, ANDed, as `node list --labels` takes them. */
  readonly selectors: readonly string[];
  /** The command (`cordon`): the plan's and the prompt's verb. */
  readonly command: string;
  /** What is done to each node: the PUT body, the reason added. */
  readonly body: Readonly<Record<string, unknown>>;
  /** The plan's words for the body beyond the verb (`with deadline 10m`), if any. */
  readonly detail?: string | undefined;
  readonly reason: string | undefined;
  /** --yes: no question asked. */
  readonly yes: boolean;
}

/** Where the question is asked; stdin and stderr by default, stand-ins in tests. */
export interface Terminal {
  readonly input: NodeJS.ReadableStream & { readonly isTTY?: boolean };
  readonly output: NodeJS.WritableStream;
}

/** The `-l` values as one selector, checked here so that a bad one is a usage error and nothing is asked for. */
function selectorOf(selectors: readonly string[]): string {
  const text = selectors.join(",");
  // An empty selector matches every node: never what `-l` was given for.
  if (selectors.some((s) => s.trim() === ""))
    throw new UsageError("-l takes a label selector (zone=a, env in (prod,stage), !spot)", HELP_REF);
  try {
    parseLabelSelector(text);
  } catch (e) {
    if (e instanceof LabelSelectorError) throw new UsageError(`-l: ${e.message}`, HELP_REF);
    throw e;
  }
  return text;
}

/**
 * `shoal node cordon|uncordon|drain|label|approve -l SELECTOR`: the matching nodes (the API's own selector, as
 * `node list --labels` asks for them) and what will be done to them are printed; on a terminal the operator is asked
 * to confirm unless --yes; without a terminal --yes is required (a script's selector is not second-guessed, nor
 * silently obeyed). Then each node, one after another, and its result: `ok` or `error: <why>`. Exit 0 when every node
 * took the action (or none matched), 1 when any did not or the question was declined.
 */
export async function actOnSelection(
  api: ApiClient,
  action: SelectionAction,
  terminal: Terminal = { input: process.stdin, output: process.stderr },
): Promise<number> {
  const selector = selectorOf(action.selectors);
  const verb = action.command;
  const { Nodes: nodes } = await api.request<{ Nodes: NodeState[] }>(
    "GET",
    `/api/v1/orchestrator/nodes?${new URLSearchParams({ labels: selector })}`,
  );
  if (nodes.length === 0) {
    print(`No node matches ${selector}: nothing to ${verb}.`);
    return 0;
  }
  const count = `${nodes.length} ${nodes.length === 1 ? "node" : "nodes"}`;
  print(`${count} ${nodes.length === 1 ? "matches" : "match"} ${selector}:`);
  print(
    formatTable(
      ["ID", "APPROVAL", "STATUS", "CORDONED", "DRAIN"],
      nodes.map((n) => [n.Info.NodeID, n.Membership, n.Health, String(n.Cordoned), n.Drain?.Status ?? "-"]),
    ),
  );
  const reason = action.reason === undefined ? "" : `, reason ${JSON.stringify(action.reason)}`;
  print(`\nWill ${verb} ${nodes.length === 1 ? "it" : `all ${nodes.length}`}${action.detail ?? ""}${reason}.`);
  if (!action.yes) {
    if (terminal.input.isTTY !== true)
      throw new UsageError(
        `-l ${selector} matches ${count} and there is no terminal to confirm on: add --yes to ${verb} them ` +
          "(nothing was changed)",
        HELP_REF,
      );
    const prompt = createInterface({ input: terminal.input, output: terminal.output });
    const answer = await prompt.question(`${verb[0]?.toUpperCase()}${verb.slice(1)} ${count}? [y/N] `);
    prompt.close();
    if (!/^y(es)?$/i.test(answer.trim())) {
      printError("Nothing was changed.");
      return 1;
    }
  }
  let failed = 0;
  for (const node of nodes) {
    const id = node.Info.NodeID;
    try {
      const res = await api.request<{ Message?: string }>(
        "PUT",
        `/api/v1/orchestrator/nodes/${encodeURIComponent(id)}`,
        {
          ...action.body,
          ...(action.reason === undefined ? {} : { Message: action.reason }),
        },
      );
      print(`${id}: ok${res?.Message === undefined ? "" : ` (${res.Message})`}`);
    } catch (e) {
      failed++;
      print(`${id}: error: ${printable((e as Error).message)}`);
    }
  }
  if (failed > 0) printError(`Error: ${verb} failed on ${failed} of ${count}.`);
  return failed > 0 ? 1 : 0;
}
