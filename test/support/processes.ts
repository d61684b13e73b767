import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:net";

function stat(pid: number): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the parenthesised command name: state is the first, start time the 20th.
    return text.slice(text.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/** True while the process exists and is not a zombie waiting to be reaped. */
export function processRunning(pid: number): boolean {
  const fields = stat(pid);
  return fields !== undefined && fields[0] !== "Z";
}

/**
 * Kills the process later only if it is still the same one (same start time): pids are reused,
 * and a cleanup must never hit another test's process.
 */
export function killLater(pid: number): () => void {
  const started = stat(pid)?.[19];
  return () => {
    const fields = stat(pid);
    if (started !== undefined && fields !== undefined && fields[0] !== "Z" && fields[19] === started)
      process.kill(pid, "SIGKILL");
  };
}

export function readPid(pidFile: string): number {
  return Number(readFileSync(pidFile, "utf8").trim());
}

/**
 * Takes a TCP port as soon as it is free and refuses every connection on it (accept, then
 * close): a nats-server restarted meanwhile fails to listen, and clients see a dead server.
 */
export async function holdPort(
  port: number,
  host = "127.0.0.1",
  timeoutMs = 10_000,
): Promise<{ release(): Promise<void> }> {
  const deadline = Date.now() + timeoutMs;
  // Polled tightly: a supervisor restarting the server a few hundred ms later must lose the race.
  for (;;) {
    const server = await new Promise<Server | undefined>((resolve) => {
      const s = createServer((socket) => socket.destroy());
      s.once("error", () => resolve(undefined));
      s.listen({ port, host, exclusive: true }, () => resolve(s));
    });
    if (server) return { release: () => new Promise<void>((resolve) => server.close(() => resolve())) };
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs}ms waiting for port ${port} to be free`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
