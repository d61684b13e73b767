const ascii = (text: string) => Array.from(text, (c) => c.charCodeAt(0));
/** The keys as msgpack fixstr, with their headers. */
const NODE_ID_KEY = Uint8Array.from([0xa0 | 6, ...ascii("NodeID")]);
const SEQUENCE_KEY = Uint8Array.from([0xa0 | 8, ...ascii("Sequence")]);

function matches(bytes: Uint8Array, at: number, expected: Uint8Array): boolean {
  for (let i = 0; i < expected.length; i++) if (bytes[at + i] !== expected[i]) return false;
  return true;
}

/**
 * Where the node id lies in `bytes` when they are exactly what an agent publishes
 * (ComputeClient.heartbeat): the msgpack map `{NodeID: <string>, Sequence: n}` in that order, n an
 * unsigned integer of at most 32 bits, and nothing more. Returns `offset * 256 + length` of the
 * id's bytes, or -1 for anything else (a MessageID, another key order or encoding: for
 * `decode(HeartbeatRequest, …)`). Read in place, allocating nothing: the hot path. It does not check that the
 * id is a valid node id: a registered node's always is, and a refusal must ask the schema
 * for the precise reason.
 */
export function agentHeartbeatIdSpan(bytes: Uint8Array): number {
  // A map of two: fixmap, or map16 as msgpackr writes it (it sizes a map after writing its header).
  let at = bytes[0] === 0x82 ? 1 : bytes[0] === 0xde && bytes[1] === 0 && bytes[2] === 2 ? 3 : 0;
  if (at === 0 || !matches(bytes, at, NODE_ID_KEY)) return -1;
  at += NODE_ID_KEY.length;
  const header = bytes[at++];
  let length: number;
  if (header === undefined) return -1;
  if ((header & 0xe0) === 0xa0) length = header & 0x1f;
  else if (header === 0xd9 && bytes[at] !== undefined) length = bytes[at++] as number;
  else return -1;
  const id = at;
  at += length;
  if (!matches(bytes, at, SEQUENCE_KEY)) return -1;
  at += SEQUENCE_KEY.length;
  const tag = bytes[at];
  if (tag === undefined) return -1;
  const size = tag <= 0x7f ? 1 : tag === 0xcc ? 2 : tag === 0xcd ? 3 : tag === 0xce ? 5 : 0;
  return size > 0 && at + size === bytes.length ? id * 256 + length : -1;
}

/** Whether `bytes` are exactly what an agent publishes (`agentHeartbeatIdSpan`) for this node. */
export function isAgentHeartbeat(bytes: Uint8Array, nodeId: string): boolean {
  const span = agentHeartbeatIdSpan(bytes);
  if (span === -1 || (span & 0xff) !== nodeId.length) return false;
  const from = span >>> 8;
  // Byte for char: a registered id is ASCII, so equal here means equal as UTF-8.
  for (let i = 0; i < nodeId.length; i++) if (bytes[from + i] !== nodeId.charCodeAt(i)) return false;
  return true;
}
