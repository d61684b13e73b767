import { nkeys, type NatsConnection } from "nats";
import type { NodeInfo } from "../../src/events/catalog/node-info.ts";
import type { ProtocolResponse } from "../../src/transport/messages.ts";
import { ComputeClient } from "../../src/transport/compute-client.ts";
import { computeInfo } from "./fixtures.ts";

const keys = new Map<string, string>();

/** The node's public key: made on first use and kept for the test file, as an agent keeps its key. */
export function nodeKey(nodeId: string): string {
  const known = keys.get(nodeId);
  if (known !== undefined) return known;
  const key: string = nkeys.createUser().getPublicKey();
  keys.set(nodeId, key);
  return key;
}

/** Joins (registers) as the node over NATS with its key and a proof of the join token, as an agent does. */
export function joinNode(nc: NatsConnection, nodeId: string, joinToken: string, info: NodeInfo = computeInfo(nodeId)): Promise<ProtocolResponse> {
  return new ComputeClient(nc, nodeId).join(info, nodeKey(nodeId), joinToken);
}
