import { join } from "node:path";
import { nkeys } from "nats";
import { credentialsDir, loadOrCreateSecret } from "../security/secret-file.ts";
import type { JoinKey } from "../transport/join-proof.ts";
import { userNkeyFromSeed } from "../transport/nkey-signature.ts";

export class NodeKeyError extends Error {
  override readonly name = "NodeKeyError";
}

export interface NodeKey extends JoinKey {
  readonly seed: Uint8Array;
  readonly path: string;
}

/**
 * The node's own credential: an NATS user nkey created once and kept (0600) under
 * `<DataDir>/credentials/<nodeId>.nkey`. Only its public half ever leaves the machine.
 */
export function loadOrCreateNodeKey(dataDir: string, nodeId: string): NodeKey {
  const path = join(credentialsDir(dataDir), `${nodeId}.nkey`);
  const { value } = loadOrCreateSecret(path, () => new TextDecoder().decode(nkeys.createUser().getSeed()));
  const seed = new TextEncoder().encode(value);
  try {
    return { ...userNkeyFromSeed(seed), seed, path };
  } catch (e) {
    throw new NodeKeyError(
      `${path} does not hold an NATS user seed (${(e as Error).message}); remove it to create a new key, then an operator must delete node ${nodeId} so it can join with it`,
    );
  }
}
