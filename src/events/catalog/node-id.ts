/**
 * The one rule for node ids, wherever one is set: the protocol (`NodeId` schema), the `NodeID`
 * config key, the `node-id` file and `--node-id`. Ids travel as NATS subject tokens and stream
 * names, so no dots, spaces or wildcards. Free of dependencies so that config loading stays cheap.
 */
export const NODE_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

export const NODE_ID_RULE = "a node id is 1-128 letters, digits, '-' or '_', starting with a letter or digit";

export const isNodeId = (id: string): boolean => NODE_ID_PATTERN.test(id);

/** Undefined for a valid id, else what is wrong with it, for an error message. */
export function nodeIdProblem(id: string): string | undefined {
  return isNodeId(id) ? undefined : `${JSON.stringify(id)} is not a valid node id: ${NODE_ID_RULE}`;
}
