import { readFileSync } from "node:fs";

/** Resident memory of a process in MB, from /proc; NaN when it is gone or unknown. */
export function rssMB(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kb === undefined ? Number.NaN : Math.round(Number(kb) / 1024);
  } catch {
    return Number.NaN;
  }
}
