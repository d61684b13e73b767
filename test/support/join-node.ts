import { nkeys, type NatsConnection } from "nats";
import type { NodeInfo } from "../../src/events/catalog/node-info.ts";
import type { JoinKey } from "../../src/transport/join-proof.ts";
import type { ProtocolResponse } from "../../src/transport/messages.ts";
import { ComputeClient } from "../../src/transport/compute-client.ts";
import { computeInfo } from "./fixtures.ts";

const keys = new Map<string, JoinKey>();

/** The node's key: made on first use and kept for the test file, as an agent keeps its key. */
export function nodeKey(nodeId: string): JoinKey {
  const known = keys.get(nodeId);
  if (known !== undefined) return known;
  const pair = nkeys.createUser();
  const key: JoinKey = { publicKey: pair.getPublicKey(), sign: (data) => pair.sign(data) };
  keys.set(nodeId, key);
  return key;
}

/** A fresh key that no node has used: for joins that must not match a node's own. */
export function otherKey(): JoinKey {
  const pair = nkeys.createUser();
  return { publicKey: pair.getPublicKey(), sign: (data) => pair.sign(data) };
}

/** Joins (registers) as the node over NATS with its key and a proof of the join token, as an agent does. */
export function joinNode(
  nc: NatsConnection,
  nodeId: string,
  joinToken: string,
  info: NodeInfo = computeInfo(nodeId),
): Promise<ProtocolResponse> {
  return new ComputeClient(nc, nodeId).join(info, nodeKey(nodeId), joinToken);
}
