import { readFileSync } from "node:fs";

/** This process's open-file limit (`ulimit -n`), from /proc; undefined where that cannot be read. */
export function openFileLimit(limitsText?: string): number | undefined {
  let text = limitsText;
  if (text === undefined) {
    try {
      text = readFileSync("/proc/self/limits", "utf8");
    } catch {
      return undefined;
    }
  }
  const soft = /^Max open files\s+(\d+|unlimited)\s/m.exec(text)?.[1];
  return soft === undefined || soft === "unlimited" ? undefined : Number(soft);
}

/** What a fleet of `nodes` needs beyond one descriptor per node: joins in flight, stdio, the runtime's own. */
export const FLEET_SPARE_FILES = 64;
