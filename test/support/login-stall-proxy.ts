import { createServer, connect, type Server, type Socket } from "node:net";

/**
 * A TCP proxy in front of a real nats-server that stalls logins: of the first `stalled`
 * connections it forwards what the server says (its INFO) but never what the client says (its
 * CONNECT), so the login never reaches the server: the server drops it at its login deadline
 * and the client, waiting a little longer, times out, as behind a server too busy to get to a
 * login in time. Later connections pass through untouched, each side's end
 * passed on after its data (a client then reads what a server said before closing, as across a
 * real network rather than loopback, where its next write may fail first).
 */
export class LoginStallProxy {
  private connections = 0;
  private readonly sockets = new Set<Socket>();

  private readonly server: Server;

  private constructor(
    private readonly target: URL,
    private readonly stalled: number,
  ) {
    this.server = createServer((client) => this.relay(client));
  }

  static async start(natsUrl: string, stalled: number): Promise<LoginStallProxy> {
    const proxy = new LoginStallProxy(new URL(natsUrl), stalled);
    await new Promise<void>((resolve) => proxy.server.listen(0, "127.0.0.1", resolve));
    return proxy;
  }

  /** The nats-server's URL, with the proxy's address. */
  get url(): string {
    const { port } = this.server.address() as { port: number };
    return `${this.target.protocol}//127.0.0.1:${port}`;
  }

  /** Connections accepted so far, stalled ones included. */
  get accepted(): number {
    return this.connections;
  }

  private relay(client: Socket): void {
    const stall = this.connections++ < this.stalled;
    const upstream = connect(Number(this.target.port), this.target.hostname);
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
      socket.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
    }
    upstream.on("data", (data) => client.write(data));
    upstream.on("end", () => client.end());
    client.on("end", () => upstream.end());
    if (!stall) client.on("data", (data) => upstream.write(data));
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
