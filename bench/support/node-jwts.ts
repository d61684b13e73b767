import { defaultConfig } from "../../src/config/keys.ts";
import { currentNatsOperator } from "../../src/orchestrator/nats-credentials.ts";
import { nodePermissions } from "../../src/transport/nats-auth/nats-roles.ts";

/**
 * Each node's user JWT as the orchestrator serving `dataDir` (its own nats-server, operator mode)
 * issues it with a join reply: for the node's key, with the node's permissions, signed by its
 * operator's account signer. Read from the DataDir as `shoal leaf config` reads it, after
 * `shoal serve` has configured its nats-server; nothing is written. The orchestrator lets in any
 * key with such a JWT: these are what pre-provisioned agents log in with, as a joined agent does
 * with the JWT it keeps.
 */
export function nodeJwts(dataDir: string, nodes: readonly { nodeId: string; publicKey: string }[]): string[] {
  const operator = currentNatsOperator({ ...defaultConfig(), DataDir: dataDir });
  if (operator === undefined) throw new Error(`${dataDir}: no nats-server configured there yet (start shoal serve)`);
  return nodes.map(({ nodeId, publicKey }) => operator.issueUser(publicKey, nodeId, nodePermissions(nodeId)));
}
