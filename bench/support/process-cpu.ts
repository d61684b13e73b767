import { readFileSync } from "node:fs";

/**
 * User + system CPU a running process has used so far, in milliseconds (Linux: /proc/<pid>/stat
 * utime and stime, in 10 ms ticks); NaN when it is gone or unknown. On a shared machine wall
 * time says as much about the neighbours as about the process: its CPU says what it cost.
 */
export function processCpuMs(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // After "pid (comm) " field 3 (state) is index 0: utime is field 14, stime field 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}
