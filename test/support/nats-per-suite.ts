import { connect, type NatsConnection } from "nats";
import { afterAll, beforeAll } from "vitest";
import { TestNatsServer } from "./nats-server.ts";

export interface SuiteNats {
  readonly url: string;
  /** A plain client of that server, as any process on the wire could hold. */
  readonly nc: NatsConnection;
}

/**
 * A real nats-server and one client connection to it, started before the suite that calls this
 * (at its top level or in a describe block) and stopped after it. Read them inside hooks and
 * tests: before the suite starts there is nothing to read, and reading throws saying so.
 */
export function natsPerSuite(): SuiteNats {
  let server: TestNatsServer | undefined;
  let connection: NatsConnection | undefined;
  beforeAll(async () => {
    server = await TestNatsServer.start();
    connection = await connect({ servers: server.url });
  });
  afterAll(async () => {
    await connection?.close();
    await server?.stop();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("natsPerSuite: read before the suite started");
    return value;
  };
  return {
    get url() {
      return started(server).url;
    },
    get nc() {
      return started(connection);
    },
  };
}
