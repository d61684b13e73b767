import { createServer } from "node:net";
import { rmSync } from "node:fs";
import { EmbeddedNatsServer } from "../../src/transport/embedded-nats-server.ts";
import { silentLogger, tempDir } from "./fixtures.ts";

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

/** A real nats-server with JetStream on a free port, per suite (the same launcher `shoal serve` uses). */
export class TestNatsServer {
  private constructor(
    private readonly server: EmbeddedNatsServer,
    private readonly dir: string,
  ) {}

  get url(): string {
    return this.server.url;
  }

  static async start(): Promise<TestNatsServer> {
    const dir = tempDir("shoal-nats-");
    const server = await EmbeddedNatsServer.start({
      host: "127.0.0.1",
      port: await freePort(),
      dir,
      logger: silentLogger,
    });
    return new TestNatsServer(server, dir);
  }

  async stop(): Promise<void> {
    await this.server.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
