import type { ComputeNodeInfo, NodeInfo } from "../events/catalog/node-info.ts";

/** Distinct parts kept per kind; past it a part is simply not shared (a fleet has a few dozen). */
const MAX_SHARED = 4_096;

/** The key order NodeInfo is decoded and stored in: an info in it is rebuilt with shared parts. */
const INFO_KEYS = "NodeID,NodeType,Hostname,Labels,ComputeNodeInfo,BacalhauVersion";
const INFO_KEYS_NO_COMPUTE = "NodeID,NodeType,Hostname,Labels,BacalhauVersion";

/** Latin-1 round-trips these exactly (node ids and host names are of them). */
const PRINTABLE_ASCII = /^[ -~]*$/;

/**
 * A copy of `s` that holds no larger string alive: a stream name's or a message's slice would
 * keep all of it (V8 keeps substrings of 13 characters or more as slices of their parent).
 */
export function flatString(s: string): string {
  return PRINTABLE_ASCII.test(s) ? Buffer.from(s, "latin1").toString("latin1") : s;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/**
 * An interning table for the parts of NodeInfo that many nodes have alike: their labels, their
 * compute info (engines, publishers, storage sources, capacities: a fleet has a few machine
 * shapes) and their version. Equal parts (equal JSON: same keys, same order, same values) become
 * one frozen object that every such node's view points at. Views are immutable, so sharing is
 * safe: a node whose labels change gets another object, and the others keep theirs. A frozen part
 * also refuses a mutation outright (test/unit/projections/shared-node-parts.test.ts).
 */
export class SharedNodeParts {
  private readonly labels = new Map<string, NodeInfo["Labels"]>();
  private readonly compute = new Map<string, ComputeNodeInfo>();
  private readonly versions = new Map<string, NodeInfo["BacalhauVersion"]>();
  /**
   * Each object already looked up (and each shared part) to the part it shares: a snapshot's slice decodes a part once
   * for the many nodes that have it (node-state-snapshot-file.ts), and a part is then looked up by its JSON once, not
   * once per node. Weak: a decoded object goes with its slice.
   */
  private readonly seen = new WeakMap<object, object>();

  /** How many distinct parts are shared (tests, diagnostics). */
  get size(): number {
    return this.labels.size + this.compute.size + this.versions.size;
  }

  /**
   * `info` with its shared parts swapped in, and `nodeId` (the view's own string) as its NodeID
   * when equal. An info of another key order is kept as it is: its JSON must not change.
   */
  info(info: NodeInfo, nodeId: string): NodeInfo {
    const keys = Object.keys(info).join(",");
    const compute = info.ComputeNodeInfo;
    if (compute !== undefined ? keys !== INFO_KEYS : keys !== INFO_KEYS_NO_COMPUTE) return info;
    // Literals with every field (not spreads): V8 then keeps the fields in the object itself.
    const nodeID = info.NodeID === nodeId ? nodeId : info.NodeID;
    const hostname = flatString(info.Hostname);
    const labels = this.share(this.labels, info.Labels);
    const version = this.share(this.versions, info.BacalhauVersion);
    return Object.freeze(
      compute !== undefined
        ? {
            NodeID: nodeID,
            NodeType: info.NodeType,
            Hostname: hostname,
            Labels: labels,
            ComputeNodeInfo: this.share(this.compute, compute),
            BacalhauVersion: version,
          }
        : { NodeID: nodeID, NodeType: info.NodeType, Hostname: hostname, Labels: labels, BacalhauVersion: version },
    );
  }

  private share<T>(table: Map<string, T>, part: T): T {
    const isObject = typeof part === "object" && part !== null;
    if (isObject) {
      const seen = this.seen.get(part);
      if (seen !== undefined) return seen as T;
    }
    const key = JSON.stringify(part);
    let shared = table.get(key);
    if (shared === undefined) {
      // Frozen whether shared or not: a view's parts are never changed in place.
      shared = deepFreeze(structuredClone(part));
      if (table.size < MAX_SHARED) table.set(key, shared);
    }
    if (isObject) {
      this.seen.set(part, shared as object);
      this.seen.set(shared as object, shared as object);
    }
    return shared;
  }
}
