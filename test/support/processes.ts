import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:net";

/** True while the process exists and is not a zombie waiting to be reaped. */
export function processRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The state follows the parenthesised command name: "pid (comm) S ...".
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

export function readPid(pidFile: string): number {
  return Number(readFileSync(pidFile, "utf8").trim());
}

/**
 * Takes a TCP port as soon as it is free and refuses every connection on it (accept, then
 * close): a nats-server restarted meanwhile fails to listen, and clients see a dead server.
 */
export async function holdPort(port: number, host = "127.0.0.1", timeoutMs = 10_000): Promise<{ release(): Promise<void> }> {
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
