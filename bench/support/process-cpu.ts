import { readFileSync } from "node:fs";

/**
 * User and system CPU a running process has used so far, in milliseconds (Linux: /proc/<pid>/stat
 * utime and stime, in 10 ms ticks); NaN when it is gone or unknown. On a shared machine wall
 * time says as much about the neighbours as about the process: its CPU says what it cost.
 */
export function processCpuSplitMs(pid: number | undefined): { readonly user: number; readonly system: number } {
  return statCpuSplitMs(pid === undefined ? undefined : `/proc/${pid}/stat`);
}

/**
 * CPU of one thread of a process so far (user + system, milliseconds); the main thread's id is the
 * process id. Node's event loop is its main thread: what bounds a single-threaded server is that
 * thread's CPU, not the process's (GC helpers, libuv's pool and the compiler run beside it).
 */
export function threadCpuMs(pid: number | undefined, tid: number | undefined = pid): number {
  const { user, system } = statCpuSplitMs(
    pid === undefined || tid === undefined ? undefined : `/proc/${pid}/task/${tid}/stat`,
  );
  return user + system;
}

function statCpuSplitMs(path: string | undefined): { readonly user: number; readonly system: number } {
  if (path === undefined) return { user: Number.NaN, system: Number.NaN };
  try {
    const stat = readFileSync(path, "utf8");
    // After "pid (comm) " field 3 (state) is index 0: utime is field 14, stime field 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { user: Number(fields[11]) * 10, system: Number(fields[12]) * 10 };
  } catch {
    return { user: Number.NaN, system: Number.NaN };
  }
}

/** User + system CPU of a running process so far, in milliseconds; NaN when unknown. */
export function processCpuMs(pid: number | undefined): number {
  const { user, system } = processCpuSplitMs(pid);
  return user + system;
}

/**
 * CPU the whole machine has spent so far, busy (user, nice, system, irq, softirq, steal) and in all, in milliseconds
 * summed over its cores (Linux: /proc/stat's first line, 10 ms ticks); NaN when unknown. Over a window, busy ÷ the
 * window is how many cores were in use, by anyone: what a benchmark's own processes got is read against it.
 */
export function machineCpuMs(): { readonly busy: number; readonly total: number } {
  try {
    const fields = readFileSync("/proc/stat", "utf8").split("\n", 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
    const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = fields;
    const busy = user + nice + system + irq + softirq + steal;
    return { busy: busy * 10, total: (busy + idle + iowait) * 10 };
  } catch {
    return { busy: Number.NaN, total: Number.NaN };
  }
}
