import { createHash } from "node:crypto";
import { canonicalInfo } from "../../machines/node/info-diff.ts";
import type { NodeState } from "../../machines/node/node-state.ts";
import type { NodeInfo } from "../events/catalog/node-info.ts";

/**
 * 64 bits of the SHA-256 of a NodeInfo's canonical form (`canonicalInfo`): what the node manager
 * keeps per compute node (8 bytes in typed arrays) to recognise an unchanged info report without
 * the node's state. Equal canonical forms are exactly the reports the decider finds unchanged; a
 * changed report that hashed the same would need a SHA-256 collision on 64 bits, chosen by the node
 * against its own previous report, and would only cost that node its own update.
 */
export interface InfoPrint {
  readonly hi: number;
  readonly lo: number;
}

export function infoPrint(info: NodeInfo): InfoPrint {
  const digest = createHash("sha256").update(canonicalInfo(info)).digest();
  return { hi: digest.readUInt32BE(0), lo: digest.readUInt32BE(4) };
}

/** What the node manager knows of a node without its actor: the facts an UpdateInfo's decision depends on. */
export interface KnownNode {
  /** Registered as a compute node (the liveness tracker has a slot for it). */
  readonly compute: boolean;
  readonly rejected: boolean;
  /** The print of its stored info, when known. */
  readonly print: InfoPrint | undefined;
}

/** What a node's stored state lets the manager know (and keep) of it. */
export function knownNode(state: NodeState): KnownNode {
  const compute = state.registered && state.nodeType === "Compute";
  return {
    compute,
    rejected: state.membership === "REJECTED",
    print: compute && state.info ? infoPrint(state.info) : undefined,
  };
}

/**
 * Whether the decider would store nothing and refuse nothing for this UpdateInfo, decided from
 * what is known alone. False means only "ask the actor", never "changed".
 */
export function knownUnchanged(known: KnownNode, info: NodeInfo, print: InfoPrint = infoPrint(info)): boolean {
  return (
    known.compute &&
    !known.rejected &&
    info.NodeType === "Compute" &&
    known.print !== undefined &&
    known.print.hi === print.hi &&
    known.print.lo === print.lo
  );
}
