import { spawn, type ChildProcess } from "node:child_process";

export interface RunningChild {
  readonly child: ChildProcess;
  /** Everything it printed so far (stdout and stderr), for error messages. */
  output(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Starts a child and waits until it prints `readyText`; a child that exits or stays silent
 * past the timeout is killed and the error carries what it printed.
 */
export async function startChild(
  command: string,
  args: readonly string[],
  readyText: string,
  timeoutMs = 60_000,
  extraEnv: Readonly<Record<string, string>> = {},
): Promise<RunningChild> {
  // The children must not inherit this script's TypeScript loader unless they ask for it.
  const env: NodeJS.ProcessEnv = { ...process.env, ...extraEnv };
  delete env.NODE_OPTIONS;
  const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const running: RunningChild = {
    child,
    output: () => out,
    stop: async (graceMs = 10_000) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
  const deadline = Date.now() + timeoutMs;
  while (!out.includes(readyText)) {
    if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
      await running.stop(1_000);
      throw new Error(`${command} ${args.join(" ")} did not get ready:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return running;
}
