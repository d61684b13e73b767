import { connect } from "node:net";

/** How long the INFO a server sends on connect is waited for: it comes at once from a server that is up. */
const INFO_WAIT_MS = 2000;

/**
 * The INFO line a nats-server sends in clear as soon as a client connects (before any TLS), parsed; undefined when
 * none comes (the server down or slow, TLS-first, not NATS). Read on a connection of its own, closed at once.
 */
export function readServerInfo(url: string): Promise<Record<string, unknown> | undefined> {
  let host: string;
  let port: number;
  try {
    const parsed = new URL(/^[a-z][a-z+-]*:\/\//i.test(url) ? url : `nats://${url}`);
    host = parsed.hostname.replace(/^\[(.*)\]$/, "$1");
    port = parsed.port === "" ? 4222 : Number(parsed.port);
  } catch {
    return Promise.resolve(undefined);
  }
  return new Promise((resolve) => {
    let text = "";
    const socket = connect({ host, port });
    const done = (info: Record<string, unknown> | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(info);
    };
    const timer = setTimeout(() => done(undefined), INFO_WAIT_MS);
    socket.setEncoding("utf8");
    socket.on("error", () => done(undefined));
    socket.on("close", () => done(undefined));
    socket.on("data", (chunk: string) => {
      text += chunk;
      const end = text.indexOf("\r\n");
      if (end < 0 && text.length < 64 * 1024) return;
      const line = end < 0 ? "" : text.slice(0, end);
      try {
        const info: unknown = line.startsWith("INFO ") ? JSON.parse(line.slice(5)) : undefined;
        done(typeof info === "object" && info !== null ? (info as Record<string, unknown>) : undefined);
      } catch {
        done(undefined);
      }
    });
  });
}
