import { effectiveLabels } from "../../machines/node/effective-labels.ts";
import type { LabelOverrides } from "../../machines/node/node-state.ts";

/** What a node's labels are made of: its own (`info.Labels`) and the operator's overrides. */
export interface LabelledNode {
  readonly info: { readonly Labels: Readonly<Record<string, string>> };
  readonly labelOverrides: LabelOverrides;
}

const labelsOfNode = new WeakMap<LabelledNode, Readonly<Record<string, string>>>();

/**
 * The node's effective labels: its own overlaid by the operator's. What every selection of nodes
 * reads (placement, the list's label filter, daemon matching). The node's own object when there
 * is no override; else made once per node object (views are immutable: a change makes a new one),
 * so that the read models and placement share one.
 */
export function nodeLabels(node: LabelledNode): Readonly<Record<string, string>> {
  if (Object.keys(node.labelOverrides).length === 0) return node.info.Labels;
  let labels = labelsOfNode.get(node);
  if (labels === undefined) labelsOfNode.set(node, (labels = effectiveLabels(node.info.Labels, node.labelOverrides)));
  return labels;
}
