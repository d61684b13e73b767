import { spawn, spawnSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";

/** The program `name` names: itself when it has a slash, else the first executable of that name on PATH. */
export function findExecutable(name: string): string | undefined {
  const executable = (path: string) => {
    try {
      accessSync(path, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (name.includes("/")) return executable(name) ? name : undefined;
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (dir === "" || !isAbsolute(dir)) continue;
    const path = join(dir, name);
    if (executable(path)) return path;
  }
  return undefined;
}

let setpriv: string | null | undefined;

/**
 * util-linux's setpriv when it can set the parent-death signal (Linux, util-linux ≥ 2.33), else null. Looked up once.
 */
function setprivWithPdeathsig(): string | null {
  if (setpriv !== undefined) return setpriv;
  setpriv = null;
  if (process.platform !== "linux") return setpriv;
  const found = findExecutable("setpriv");
  if (found === undefined) return setpriv;
  const probe = spawnSync(found, ["--pdeathsig", "KILL", "--", "true"], { stdio: "ignore", timeout: 5_000 });
  if (probe.status === 0) setpriv = found;
  return setpriv;
}

/**
 * The command line that runs `binary args` so that it is killed (SIGKILL) when the process that
 * spawns it dies, however it dies: a child started detached (its own process group, so a Ctrl-C
 * reaches only its parent, which stops it in order) would otherwise outlive a `kill -9` of its
 * parent. setpriv sets the parent-death signal and then execs the binary, which keeps it (it is
 * cleared only for set-user-ID programs): same pid, same signals, the exit status is the binary's
 * own. The signal is tied to the thread that spawned it; Node spawns from its main thread, which
 * lives as long as the process. Where setpriv is missing (not Linux, util-linux < 2.33) the
 * command is unchanged and `wrapped` false: give the child a `parentWatchdog`.
 *
 * `binary` must already be resolved (findExecutable): through setpriv a missing binary would
 * surface as setpriv's exit status, not as spawn's ENOENT.
 */
export function dieWithParent(
  binary: string,
  args: readonly string[],
): { readonly command: string; readonly args: readonly string[]; readonly wrapped: boolean } {
  const wrapper = setprivWithPdeathsig();
  if (wrapper === null) return { command: binary, args, wrapped: false };
  return { command: wrapper, args: ["--pdeathsig", "KILL", "--", binary, ...args], wrapped: true };
}

/** What stops a watchdog that is no longer needed (the child it guards has exited, or is being stopped in order). */
export interface ParentWatchdog {
  stop(): void;
}

/**
 * Where setpriv is missing: a small `sh` that waits for end of file on a pipe this process holds
 * open and then SIGKILLs `pid`. The kernel closes the pipe however this process ends, `kill -9`
 * included, so the watchdog notices what this process cannot report. Its own process group, as
 * the child's: a Ctrl-C reaches only this process. Holds nothing that keeps Node's event loop alive.
 */
export function parentWatchdog(pid: number): ParentWatchdog {
  const watchdog = spawn("sh", ["-c", 'read -r _ ; kill -KILL "$1" 2>/dev/null', "shoal-watchdog", String(pid)], {
    stdio: ["pipe", "ignore", "ignore"],
    detached: true,
  });
  watchdog.on("error", () => undefined); // no sh: no watchdog, the next start's stopLeftover remains
  watchdog.stdin?.on("error", () => undefined);
  watchdog.unref();
  (watchdog.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  return {
    stop: () => {
      // SIGKILL, not end of file: closing the pipe is what tells it to kill.
      if (watchdog.exitCode === null && watchdog.signalCode === null) watchdog.kill("SIGKILL");
    },
  };
}
