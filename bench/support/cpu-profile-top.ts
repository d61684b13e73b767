/**
 * Summarises a V8 CPU profile (`node --cpu-prof` writes one `.cpuprofile` when the process exits):
 * where the sampled time went, by self time and by inclusive time, per function and per area of
 * the code (a folder of src/ or machines/, a package under node_modules, Node's own internals).
 *
 *   npx tsx bench/support/cpu-profile-top.ts <file.cpuprofile> [--from <µs>] [--to <µs>] [--top 30]
 *
 * `--from`/`--to` keep the samples taken in that window, in the profile's own clock (CLOCK_MONOTONIC
 * in µs on Linux, the clock of `process.hrtime`): bench/job-throughput.ts prints its job phase so.
 * Idle samples count in the window's time but belong to no area; "(program)" and "(garbage
 * collector)" are V8's own. A native leaf (a syscall such as `writeBuffer`) is also charged to
 * the area of the nearest JavaScript frame above it, so that "who made the syscall" shows.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
  readonly columnNumber: number;
}

interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: readonly number[];
}

export interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly startTime: number;
  readonly endTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

export interface Row {
  readonly name: string;
  readonly ms: number;
}

export interface ProfileSummary {
  /** The window's wall time, and the part of it the thread was sampled busy (not idle). */
  readonly wallMs: number;
  readonly busyMs: number;
  readonly selfByFunction: readonly Row[];
  readonly totalByFunction: readonly Row[];
  readonly selfByArea: readonly Row[];
  readonly totalByArea: readonly Row[];
}

const VM_FRAMES = new Set(["(root)", "(program)", "(idle)", "(garbage collector)"]);

/** The area a frame belongs to: `src/<folder>`, `machines/<folder>`, `nats`, `node:internal`, or V8's own. */
export function areaOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (url === "") return VM_FRAMES.has(functionName) ? functionName : "(native)";
  const modules = url.lastIndexOf("/node_modules/");
  if (modules >= 0) {
    const parts = url.slice(modules + "/node_modules/".length).split("/");
    return `npm:${parts[0]?.startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0]}`;
  }
  if (url.startsWith("node:")) return "node:internal";
  const source = /\/(src|machines|bench)\/([^/]+)\//.exec(url) ?? /\/(src|machines|bench)\/([^/]+)$/.exec(url);
  if (source !== null) return `${source[1]}/${source[2]!.replace(/\.[cm]?[jt]s$/, "")}`;
  return url;
}

function functionLabel(frame: CallFrame): string {
  const file = frame.url === "" ? "" : ` ${frame.url.replace(/^.*\/(node_modules|src|machines|dist)\//, "$1/")}`;
  return `${frame.functionName || "(anonymous)"}${file}${frame.url === "" ? "" : `:${frame.lineNumber + 1}`}`;
}

const sorted = (m: Map<string, number>): Row[] =>
  [...m.entries()].map(([name, us]) => ({ name, ms: us / 1000 })).sort((a, b) => b.ms - a.ms);

const add = (m: Map<string, number>, key: string, us: number) => m.set(key, (m.get(key) ?? 0) + us);

/** Self and inclusive time per function and per area over the samples taken in [fromUs, toUs]. */
export function summarise(profile: CpuProfile, fromUs = -Infinity, toUs = Infinity): ProfileSummary {
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const selfFn = new Map<string, number>();
  const totalFn = new Map<string, number>();
  const selfArea = new Map<string, number>();
  const totalArea = new Map<string, number>();
  let wallUs = 0;
  let busyUs = 0;
  // Sample i was taken at startTime + timeDeltas[0..i]; the time until the next sample is charged to it.
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0;
    const next = i + 1 < profile.samples.length ? at + (profile.timeDeltas[i + 1] ?? 0) : profile.endTime;
    const us = Math.max(0, next - at);
    if (at < fromUs || at > toUs) continue;
    wallUs += us;
    const leaf = byId.get(profile.samples[i]!);
    if (leaf === undefined || leaf.callFrame.functionName === "(idle)") continue;
    busyUs += us;
    add(selfFn, functionLabel(leaf.callFrame), us);
    const leafArea = areaOf(leaf.callFrame);
    const seenFn = new Set<string>();
    const seenArea = new Set<string>();
    let caller: string | undefined;
    for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id)) {
      const frame = byId.get(id)!.callFrame;
      if (frame.functionName === "(root)") break;
      const label = functionLabel(frame);
      if (!seenFn.has(label)) {
        seenFn.add(label);
        add(totalFn, label, us);
      }
      const area = areaOf(frame);
      if (caller === undefined && frame.url !== "") caller = area;
      if (!seenArea.has(area)) {
        seenArea.add(area);
        add(totalArea, area, us);
      }
    }
    add(selfArea, leafArea === "(native)" && caller !== undefined ? `${caller} (native calls)` : leafArea, us);
  }
  return {
    wallMs: wallUs / 1000,
    busyMs: busyUs / 1000,
    selfByFunction: sorted(selfFn),
    totalByFunction: sorted(totalFn),
    selfByArea: sorted(selfArea),
    totalByArea: sorted(totalArea),
  };
}

function print(title: string, rows: readonly Row[], busyMs: number, top: number): void {
  console.log(`\n${title}`);
  for (const r of rows.slice(0, top))
    console.log(`${r.ms.toFixed(0).padStart(9)} ms ${((r.ms / busyMs) * 100).toFixed(1).padStart(5)} %  ${r.name}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { from: { type: "string" }, to: { type: "string" }, top: { type: "string", default: "30" } },
  });
  const file = positionals[0];
  if (file === undefined) throw new Error("usage: cpu-profile-top.ts <file.cpuprofile> [--from µs] [--to µs]");
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const s = summarise(
    profile,
    values.from === undefined ? -Infinity : Number(values.from),
    Number(values.to ?? Infinity),
  );
  const top = Number(values.top);
  console.log(
    `${file}: ${(s.wallMs / 1000).toFixed(2)} s sampled, busy ${(s.busyMs / 1000).toFixed(2)} s ` +
      `(${((s.busyMs / s.wallMs) * 100).toFixed(0)} %); shares below are of the busy time`,
  );
  print("self time by area", s.selfByArea, s.busyMs, top);
  print("inclusive time by area", s.totalByArea, s.busyMs, top);
  print("self time by function", s.selfByFunction, s.busyMs, top);
  print("inclusive time by function", s.totalByFunction, s.busyMs, top);
}
