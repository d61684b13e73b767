import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { defineRoute, registerRoutes } from "../../../src/api/route.ts";

const route = (capability: "read:node" | "write:node" | "public") =>
  defineRoute({
    method: "GET",
    path: "/api/v1/orchestrator/nodes/:id/labels",
    operationId: "nodeLabels",
    tags: ["Nodes"],
    summary: "Returns a node's labels.",
    description: "A route of this test only.",
    capability,
    responses: { "200": { description: "Labels" } },
    handler: async () => ({}),
  });

describe("registerRoutes", () => {
  it("refuses a route whose declared capability is not the one route-access.ts enforces", () => {
    expect(() => registerRoutes(Fastify(), [route("write:node")])).toThrow(
      "GET /api/v1/orchestrator/nodes/:id/labels declares write:node but route-access.ts enforces read:node",
    );
    expect(() => registerRoutes(Fastify(), [route("public")])).toThrow(/enforces read:node/);
  });

  it("registers a route that declares what is enforced", async () => {
    const app = Fastify();
    registerRoutes(app, [route("read:node")]);
    expect(app.hasRoute({ method: "GET", url: "/api/v1/orchestrator/nodes/:id/labels" })).toBe(true);
    await app.close();
  });
});
