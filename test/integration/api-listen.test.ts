import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import Fastify from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { apiListenAddresses, listenApi } from "../../src/api/listen-api.ts";
import { startOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { orchestratorConfig, silentLogger } from "../support/fixtures.ts";
import { getJsonOverHttps } from "../support/https-json.ts";
import { natsPerSuite } from "../support/nats-per-suite.ts";

/**
 * Where the API listens: with the default API.Host a client reaches it over IPv4 and IPv6 alike, by the names its
 * generated certificate covers; an address this machine lacks gives way to the next, a port in use does not.
 */

const nats = natsPerSuite();
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const ALIVE = "/api/v1/agent/alive";

describe("the API with the default API.Host (0.0.0.0)", () => {
  it("answers https://localhost whether the client resolves it to 127.0.0.1 or to ::1, and [::1]", async () => {
    const orchestrator = await startOrchestrator(
      orchestratorConfig(nats.url, { "API.Host": "0.0.0.0", "API.TLS.Disable": false }),
      silentLogger,
    );
    cleanups.push(() => orchestrator.stop());
    const port = new URL(orchestrator.apiUrl).port;
    const ca = readFileSync(orchestrator.apiCaFile!, "utf8");
    for (const [url, address] of [
      [`https://localhost:${port}`, "::1"],
      [`https://localhost:${port}`, "127.0.0.1"],
      [`https://[::1]:${port}`, undefined],
      [`https://127.0.0.1:${port}`, undefined],
    ] as const) {
      const answer = getJsonOverHttps(`${url}${ALIVE}`, ca, address === undefined ? {} : { address });
      await expect(answer, `${url} at ${address ?? "its own address"}`).resolves.toMatchObject({ Status: "OK" });
    }
  });
});

describe("listenApi", () => {
  const app = () => {
    const made = Fastify();
    made.get("/", () => ({ ok: true }));
    cleanups.push(() => made.close());
    return made;
  };

  it("listens on both stacks for 0.0.0.0 and on the address given otherwise", () => {
    expect(apiListenAddresses("0.0.0.0")).toEqual([{ host: "::", ipv6Only: false }, { host: "0.0.0.0" }]);
    expect(apiListenAddresses("127.0.0.1")).toEqual([{ host: "127.0.0.1" }]);
    expect(apiListenAddresses("::")).toEqual([{ host: "::" }]);
  });

  it("moves on from an address this machine lacks to the next", async () => {
    const server = app();
    // 192.0.2.0/24 is for documentation: no machine has it, as a machine without IPv6 has no ::.
    const took = await listenApi(server, 0, [{ host: "192.0.2.1" }, { host: "127.0.0.1" }]);
    expect(took).toEqual({ host: "127.0.0.1" });
    const { port } = server.server.address() as { port: number };
    expect(await (await fetch(`http://127.0.0.1:${port}/`)).json()).toEqual({ ok: true });
  });

  it("fails at once on a port in use, never trying the next address", async () => {
    const holder: Server = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise((resolve) => holder.close(resolve)));
    const { port } = holder.address() as { port: number };
    const server = app();
    await expect(listenApi(server, port, [{ host: "127.0.0.1" }, { host: "::1" }])).rejects.toMatchObject({
      code: "EADDRINUSE",
    });
    expect(server.server.listening).toBe(false);
    await expect(listenApi(server, port, [{ host: "192.0.2.1" }])).rejects.toMatchObject({ code: "EADDRNOTAVAIL" });
  });
});
