/**
 * Writes the state diagram of each entity kind registered in the event catalog (ENTITY_EVENTS, in its order), drawn
 * from its chart (machines/<category>/<category>-chart.ts, which exports that one chart), into docs/core.md between
 * the begin and end markers, as mermaid `stateDiagram-v2`.
 *
 *   npm run diagrams          rewrite the diagrams
 *   npm run diagrams:check    fail when the checked-in diagrams differ from the charts (part of npm run check)
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { StateMachine, type AnyStateMachine } from "xstate";
import { ENTITY_EVENTS } from "../src/events/catalog/entity-events.ts";

const DOC = join(import.meta.dirname, "../docs/core.md");
const BEGIN = "<!-- state diagrams: begin (generated from the charts by `npm run diagrams`; do not edit) -->";
const END = "<!-- state diagrams: end -->";

interface TitledChart {
  readonly title: string;
  readonly chart: AnyStateMachine;
}

/** Each registered kind's chart, found where its kind keeps it: no list here for a new kind to be missing from. */
async function charts(): Promise<TitledChart[]> {
  const found: TitledChart[] = [];
  for (const { category } of ENTITY_EVENTS) {
    const file = `machines/${category}/${category}-chart.ts`;
    const path = join(import.meta.dirname, "..", file);
    if (!existsSync(path)) throw new Error(`entity kind ${category}: no chart at ${file}`);
    const exported = Object.values(await import(pathToFileURL(path).href));
    const machines = exported.filter((value): value is AnyStateMachine => value instanceof StateMachine);
    if (machines.length !== 1)
      throw new Error(`entity kind ${category}: ${file} exports ${machines.length} charts; it must export exactly one`);
    const title = `${category[0]!.toUpperCase()}${category.slice(1)} (\`${file}\`)`;
    found.push({ title, chart: machines[0]! });
  }
  return found;
}

interface StateNode {
  readonly key: string;
  readonly type: "atomic" | "compound" | "parallel" | "final" | "history";
  readonly parent?: StateNode;
  readonly states: Readonly<Record<string, StateNode>>;
  readonly initial?: { readonly target: readonly StateNode[] };
  readonly transitions: ReadonlyMap<string, readonly Transition[]>;
}

interface Transition {
  readonly target?: readonly StateNode[];
  readonly guard?: unknown;
}

const ancestry = (node: StateNode): StateNode[] => (node.parent ? [...ancestry(node.parent), node] : [node]);

const guardName = (guard: unknown): string | undefined =>
  typeof guard === "string" ? guard : (guard as { type?: string } | undefined)?.type;

/** The edges a composite state draws: between its children, labelled with the events (and guards) that take them. */
function edgesWithin(root: StateNode): Map<StateNode, Map<string, string[]>> {
  const edges = new Map<StateNode, Map<string, string[]>>();
  const add = (within: StateNode, from: string, to: string, label: string): void => {
    const block = edges.get(within) ?? new Map<string, string[]>();
    edges.set(within, block);
    const key = `${from} --> ${to}`;
    block.set(key, [...(block.get(key) ?? []), label]);
  };
  const visit = (node: StateNode): void => {
    for (const [event, transitions] of node.transitions) {
      for (const t of transitions) {
        const guard = guardName(t.guard);
        const label = guard === undefined ? event : `${event} [${guard}]`;
        // Targetless: the event changes the entity's data, not its state.
        if (t.target === undefined || t.target.length === 0) {
          add(node.parent ?? node, node.key, node.key, label);
          continue;
        }
        for (const target of t.target) {
          // Drawn between the children of the states' nearest common ancestor (mermaid draws no edge into another
          // composite); a deeper target is named in the label.
          const from = ancestry(node);
          const to = ancestry(target);
          let depth = 0;
          // Never past the states themselves: a state's edge to itself is drawn in its parent.
          const deepest = Math.min(from.length, to.length) - 2;
          while (depth < deepest && from[depth + 1] === to[depth + 1]) depth++;
          const source = from[depth + 1] ?? node;
          const drawn = to[depth + 1] ?? target;
          add(from[depth]!, source.key, drawn.key, drawn === target ? label : `${label} to ${target.key}`);
        }
      }
    }
    for (const child of Object.values(node.states)) visit(child);
  };
  visit(root);
  return edges;
}

function render(node: StateNode, edges: Map<StateNode, Map<string, string[]>>, indent: string): string[] {
  const lines: string[] = [];
  const children = Object.values(node.states);
  if (node.type === "parallel") {
    children.forEach((region, i) => {
      if (i > 0) lines.push(`${indent}--`);
      lines.push(`${indent}state ${region.key} {`, ...render(region, edges, `${indent}  `), `${indent}}`);
    });
  } else {
    const initial = node.initial?.target[0];
    if (initial) lines.push(`${indent}[*] --> ${initial.key}`);
    for (const child of children) {
      if (child.type === "compound" || child.type === "parallel")
        lines.push(`${indent}state ${child.key} {`, ...render(child, edges, `${indent}  `), `${indent}}`);
    }
    for (const child of children) if (child.type === "final") lines.push(`${indent}${child.key} --> [*]`);
  }
  for (const [edge, labels] of edges.get(node) ?? []) lines.push(`${indent}${edge}: ${labels.join(", ")}`);
  return lines;
}

/** One chart as a mermaid state diagram. */
export function stateDiagram(chart: AnyStateMachine): string {
  const root = chart.root as unknown as StateNode;
  return ["```mermaid", "stateDiagram-v2", ...render(root, edgesWithin(root), "  "), "```"].join("\n");
}

function generated(drawn: readonly TitledChart[]): string {
  const parts = drawn.map(({ title, chart }) => `#### ${title}\n\n${stateDiagram(chart)}`);
  return [BEGIN, "", ...parts.flatMap((p) => [p, ""]), END].join("\n");
}

const doc = readFileSync(DOC, "utf8");
const begin = doc.indexOf(BEGIN);
const end = doc.indexOf(END);
if (begin < 0 || end < begin) {
  console.error(`${DOC}: no state-diagram markers (${BEGIN} … ${END})`);
  process.exit(1);
}
const updated = doc.slice(0, begin) + generated(await charts()) + doc.slice(end + END.length);
if (process.argv.includes("--check")) {
  if (updated !== doc) {
    console.error("docs/core.md: the state diagrams differ from the charts; run `npm run diagrams` to redraw them");
    process.exit(1);
  }
  console.log("docs/core.md: the state diagrams match the charts");
} else if (updated !== doc) {
  writeFileSync(DOC, updated);
  console.log("docs/core.md: state diagrams redrawn from the charts");
} else {
  console.log("docs/core.md: the state diagrams already match the charts");
}
