import { createServer, connect, type Server, type Socket } from "node:net";

/**
 * What the proxy does to one connection:
 * - `stall-login`: forwards what the server says (a nats-server's INFO) but never what the client says (its
 *   CONNECT), so the login never reaches the server: the server drops it at its login deadline and the client,
 *   waiting a little longer, times out, as behind a server too busy to get to a login in time;
 * - `lose-answer`: forwards the client's request, then cuts the connection when the server starts to answer, before
 *   the client reads a byte of it: the server did the work, and the client cannot tell.
 */
export type ConnectionFault = "stall-login" | "lose-answer";

/**
 * A TCP proxy in front of a real server that applies `faults[i]` to its i-th connection. Later connections pass
 * through untouched, each side's end passed on after its data (a client then reads what a server said before
 * closing, as across a real network rather than loopback, where its next write may fail first).
 */
export class FaultyProxy {
  private connections = 0;
  private readonly sockets = new Set<Socket>();

  private readonly server: Server;

  private constructor(
    private readonly target: URL,
    private readonly faults: readonly ConnectionFault[],
  ) {
    this.server = createServer((client) => this.relay(client));
  }

  static async start(url: string, faults: readonly ConnectionFault[]): Promise<FaultyProxy> {
    const proxy = new FaultyProxy(new URL(url), faults);
    await new Promise<void>((resolve) => proxy.server.listen(0, "127.0.0.1", resolve));
    return proxy;
  }

  get port(): number {
    return (this.server.address() as { port: number }).port;
  }

  /** The server's URL, with the proxy's address. */
  get url(): string {
    return `${this.target.protocol}//127.0.0.1:${this.port}`;
  }

  /** Connections accepted so far, faulty ones included. */
  get accepted(): number {
    return this.connections;
  }

  private relay(client: Socket): void {
    const fault = this.faults[this.connections++];
    const upstream = connect(Number(this.target.port), this.target.hostname);
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
      socket.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
    }
    upstream.on("data", (data) => {
      if (fault !== "lose-answer") return void client.write(data);
      client.destroy();
      upstream.destroy();
    });
    upstream.on("end", () => client.end());
    client.on("end", () => upstream.end());
    if (fault !== "stall-login") client.on("data", (data) => upstream.write(data));
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
