import { readFileSync } from "node:fs";

/**
 * A V8 heap snapshot (`.heapsnapshot`, as `--heapsnapshot-signal` or `v8.writeHeapSnapshot`
 * write it) read into flat typed arrays, and its bytes attributed to owners.
 *
 * Attribution is exclusive and in priority order: each owner takes every object reachable from
 * its roots that no earlier owner took, following strong references only and never entering
 * code, closures or hidden classes (so an instance does not reach the whole program through its
 * prototype's constructor or a bound method's context). Objects shared by two owners count for
 * the first one listed: the order is part of the answer (node info before the views that hold it,
 * the views before the index entries that point at them). What no owner reaches is "the rest".
 * Dominator-based retained sizes would attribute a shared object to neither sharer; this
 * attribution answers "what would go if this structure and what only it holds went", in order.
 */
export interface HeapGraph {
  readonly nodeCount: number;
  readonly totalBytes: number;
  typeOf(node: number): string;
  nameOf(node: number): string;
  selfSize(node: number): number;
  /** Objects (JS instances) whose constructor is `className`. */
  instances(className: string): number[];
  /** The target of a named property or internal edge of `node`. */
  prop(node: number, name: string): number | undefined;
  /** Every strong target of `node` (element, property, internal, hidden edges). */
  children(node: number): number[];
}

const STRING_TYPES = new Set(["string", "concatenated string", "sliced string"]);
/** Never entered while attributing: shared program structure, not data. */
const OPAQUE_TYPES = new Set(["code", "closure", "object shape", "synthetic"]);
const OPAQUE_EDGES = new Set(["__proto__", "map", "constructor", "prototype", "context"]);

/** Parses `"<key>":[n,n,…]` starting at `from` into numbers, without a string of the whole array. */
function numbersAfter(buf: Buffer, key: string, from = 0): { values: Float64Array; end: number } {
  const at = buf.indexOf(`"${key}":[`, from);
  if (at < 0) throw new Error(`heap snapshot: no "${key}" array`);
  let i = at + key.length + 4;
  const close = buf.indexOf("]", i);
  // A digit-count upper bound on the elements: commas + 1.
  let commas = 0;
  for (let j = i; j < close; j++) if (buf[j] === 44) commas++;
  const values = new Float64Array(close === i ? 0 : commas + 1);
  let n = 0;
  let current = 0;
  let inNumber = false;
  for (; i < close; i++) {
    const c = buf[i] as number;
    if (c >= 48 && c <= 57) {
      current = current * 10 + (c - 48);
      inNumber = true;
    } else if (c === 44) {
      values[n++] = current;
      current = 0;
      inNumber = false;
    }
  }
  if (inNumber) values[n++] = current;
  return { values: values.subarray(0, n), end: close };
}

interface Meta {
  node_fields: string[];
  node_types: [string[], ...unknown[]];
  edge_fields: string[];
  edge_types: [string[], ...unknown[]];
}

export function readHeapSnapshot(path: string): HeapGraph {
  const buf = readFileSync(path);
  const nodesAt = buf.indexOf('"nodes":[');
  const head = JSON.parse(`${buf.toString("utf8", 0, nodesAt).replace(/,\s*$/, "")}}`) as { snapshot: { meta: Meta } };
  const meta = head.snapshot.meta;
  const nodes = numbersAfter(buf, "nodes");
  const edges = numbersAfter(buf, "edges", nodes.end);
  const stringsAt = buf.indexOf('"strings":[', edges.end);
  const stringsEnd = buf.lastIndexOf("]");
  const strings = JSON.parse(buf.toString("utf8", stringsAt + '"strings":'.length, stringsEnd + 1)) as string[];

  const nf = meta.node_fields.length;
  const ef = meta.edge_fields.length;
  const [fType, fName, fSize, fEdges] = ["type", "name", "self_size", "edge_count"].map((f) =>
    meta.node_fields.indexOf(f),
  ) as [number, number, number, number];
  const [eType, eName, eTo] = ["type", "name_or_index", "to_node"].map((f) => meta.edge_fields.indexOf(f)) as [
    number,
    number,
    number,
  ];
  const nodeTypes = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const count = nodes.values.length / nf;
  const firstEdge = new Uint32Array(count + 1);
  let totalBytes = 0;
  for (let i = 0, e = 0; i < count; i++) {
    firstEdge[i] = e;
    e += (nodes.values[i * nf + fEdges] as number) * ef;
    totalBytes += nodes.values[i * nf + fSize] as number;
  }
  firstEdge[count] = edges.values.length;
  const named = new Set(["property", "internal", "context", "shortcut"]);
  const strongTypes = new Set(["element", "property", "internal", "hidden"].map((t) => edgeTypes.indexOf(t)));
  const objectType = nodeTypes.indexOf("object");

  const edgeName = (e: number): string | undefined => {
    const type = edgeTypes[edges.values[e + eType] as number] as string;
    return named.has(type) ? strings[edges.values[e + eName] as number] : undefined;
  };
  const target = (e: number) => (edges.values[e + eTo] as number) / nf;

  return {
    nodeCount: count,
    totalBytes,
    typeOf: (node) => nodeTypes[nodes.values[node * nf + fType] as number] as string,
    nameOf: (node) => strings[nodes.values[node * nf + fName] as number] as string,
    selfSize: (node) => nodes.values[node * nf + fSize] as number,
    instances(className) {
      const out: number[] = [];
      for (let i = 0; i < count; i++)
        if (
          nodes.values[i * nf + fType] === objectType &&
          strings[nodes.values[i * nf + fName] as number] === className
        )
          out.push(i);
      return out;
    },
    prop(node, name) {
      for (let e = firstEdge[node] as number; e < (firstEdge[node + 1] as number); e += ef)
        if (edgeName(e) === name) return target(e);
      return undefined;
    },
    children(node) {
      const out: number[] = [];
      for (let e = firstEdge[node] as number; e < (firstEdge[node + 1] as number); e += ef) {
        if (!strongTypes.has(edges.values[e + eType] as number)) continue;
        const name = edgeName(e);
        if (name !== undefined && OPAQUE_EDGES.has(name)) continue;
        out.push(target(e));
      }
      return out;
    },
  };
}

export interface OwnerSpec {
  readonly name: string;
  /** Where the owner's objects start (its instance, or some of its fields). */
  roots(graph: HeapGraph): number[];
}

export interface OwnerShare {
  readonly name: string;
  readonly bytes: number;
  /** Of `bytes`, in strings. */
  readonly stringBytes: number;
  readonly objects: number;
  /** Its largest kinds of object (`type: constructor`), biggest first. */
  readonly kinds: readonly { readonly kind: string; readonly bytes: number; readonly objects: number }[];
}

export interface HeapBreakdown {
  readonly totalBytes: number;
  readonly owners: readonly OwnerShare[];
  /** What no owner reached, by node type (code, strings, closures, …). */
  readonly rest: readonly OwnerShare[];
}

/** Strings, code and the like by type; objects, arrays and native data by their constructor too. */
function kindOf(graph: HeapGraph, node: number): string {
  const type = graph.typeOf(node);
  return type === "object" || type === "array" || type === "hidden" || type === "native"
    ? `${type}: ${graph.nameOf(node).slice(0, 40)}`
    : type;
}

/** Attributes the snapshot's bytes to `owners`, exclusively, in the order given. */
export function attribute(graph: HeapGraph, owners: readonly OwnerSpec[]): HeapBreakdown {
  const taken = new Uint8Array(graph.nodeCount);
  const shares: OwnerShare[] = [];
  for (const owner of owners) {
    let bytes = 0;
    let stringBytes = 0;
    let objects = 0;
    const kinds = new Map<string, { bytes: number; objects: number }>();
    const stack = owner.roots(graph).filter((r) => taken[r] === 0);
    for (const r of stack) taken[r] = 1;
    while (stack.length > 0) {
      const node = stack.pop() as number;
      const size = graph.selfSize(node);
      bytes += size;
      objects++;
      if (STRING_TYPES.has(graph.typeOf(node))) stringBytes += size;
      const kind = kindOf(graph, node);
      const k = kinds.get(kind) ?? { bytes: 0, objects: 0 };
      k.bytes += size;
      k.objects++;
      kinds.set(kind, k);
      for (const child of graph.children(node)) {
        if (taken[child] !== 0 || OPAQUE_TYPES.has(graph.typeOf(child))) continue;
        taken[child] = 1;
        stack.push(child);
      }
    }
    const top = [...kinds.entries()]
      .map(([kind, k]) => ({ kind, ...k }))
      .sort((a, b) => b.bytes - a.bytes)
      .slice(0, 6);
    shares.push({ name: owner.name, bytes, stringBytes, objects, kinds: top });
  }
  const rest = new Map<string, { bytes: number; objects: number }>();
  for (let i = 0; i < graph.nodeCount; i++) {
    if (taken[i] !== 0) continue;
    const group = kindOf(graph, i);
    const r = rest.get(group) ?? { bytes: 0, objects: 0 };
    r.bytes += graph.selfSize(i);
    r.objects++;
    rest.set(group, r);
  }
  const restShares = [...rest.entries()]
    .map(([name, r]) => ({
      name,
      bytes: r.bytes,
      stringBytes: STRING_TYPES.has(name) ? r.bytes : 0,
      objects: r.objects,
      kinds: [],
    }))
    .sort((a, b) => b.bytes - a.bytes);
  return { totalBytes: graph.totalBytes, owners: shares, rest: restShares };
}

/** Helpers for owner roots. */
export const roots = {
  /** Every instance of a class. */
  instances: (className: string) => (g: HeapGraph) => g.instances(className),
  /** A field of every instance of a class. */
  field: (className: string, field: string) => (g: HeapGraph) =>
    g.instances(className).flatMap((i) => {
      const t = g.prop(i, field);
      return t === undefined ? [] : [t];
    }),
  /** A field of every object value in a Map field of every instance of a class (`NodeViews.views → view.info`). */
  fieldOfMapValues: (className: string, mapField: string, field: string) => (g: HeapGraph) =>
    g.instances(className).flatMap((i) => {
      const map = g.prop(i, mapField);
      const table = map === undefined ? undefined : g.prop(map, "table");
      if (table === undefined) return [];
      return g
        .children(table)
        .filter((v) => g.typeOf(v) === "object")
        .flatMap((v) => {
          const t = g.prop(v, field);
          return t === undefined ? [] : [t];
        });
    }),
};
