import { describe, expect, it } from "vitest";
import { hasCapability, type RequiredCapability } from "../../../src/api/auth/capabilities.ts";
import { routeAccess } from "../../../src/api/auth/route-access.ts";

describe("capability matching (Bacalhau's rules plus read:history)", () => {
  const cases: [string[], RequiredCapability, boolean][] = [
    [["read:node"], "read:node", true],
    [["read:node"], "write:node", false],
    [["read:node"], "read:agent", false],
    [["write:node"], "read:node", false],
    [["read:*"], "read:node", true],
    [["read:*"], "read:agent", true],
    [["read:*"], "read:history", true],
    [["read:*"], "write:node", false],
    [["write:*"], "write:node", true],
    [["write:*"], "write:job", true],
    [["write:*"], "read:node", false],
    [["*"], "write:node", true],
    [["*"], "read:history", true],
    [["read:history"], "read:history", true],
    [["read:history"], "read:node", false],
    [["read:node", "write:node"], "read:history", false],
    [[], "read:node", false],
    [["read:job", "write:node"], "write:node", true],
  ];
  for (const [actions, required, expected] of cases) {
    it(`${JSON.stringify(actions)} ${expected ? "grants" : "does not grant"} ${required}`, () => {
      expect(hasCapability(actions, required)).toBe(expected);
    });
  }
});

describe("route access", () => {
  it("keeps probes, version and the API description (the document and its page) public", () => {
    for (const route of ["/api/v1/agent/alive", "/api/v1/agent/version", "/api/v1/openapi.json", "/api/v1/docs"]) {
      expect(routeAccess("GET", route), route).toEqual({ public: true });
    }
  });

  it("never opens the agent's configuration to anonymous readers", () => {
    expect(routeAccess("GET", "/api/v1/agent/config")).toEqual({
      public: false,
      capability: "read:agent",
      anonymousRead: false,
    });
  });

  it("maps GET to read:<resource> and other methods to write:<resource>, anonymous only for reads", () => {
    expect(routeAccess("GET", "/api/v1/orchestrator/nodes")).toEqual({
      public: false,
      capability: "read:node",
      anonymousRead: true,
    });
    expect(routeAccess("HEAD", "/api/v1/orchestrator/nodes/:id")).toEqual({
      public: false,
      capability: "read:node",
      anonymousRead: true,
    });
    expect(routeAccess("PUT", "/api/v1/orchestrator/nodes/:id")).toEqual({
      public: false,
      capability: "write:node",
      anonymousRead: false,
    });
    expect(routeAccess("DELETE", "/api/v1/orchestrator/nodes/:id")).toEqual({
      public: false,
      capability: "write:node",
      anonymousRead: false,
    });
    expect(routeAccess("GET", "/api/v1/agent/node")).toEqual({
      public: false,
      capability: "read:agent",
      anonymousRead: true,
    });
    expect(routeAccess("POST", "/api/v1/agent/node")).toEqual({
      public: false,
      capability: "write:agent",
      anonymousRead: false,
    });
    expect(routeAccess("GET", "/api/v1/orchestrator/jobs/:id")).toEqual({
      public: false,
      capability: "read:job",
      anonymousRead: true,
    });
    expect(routeAccess("PUT", "/api/v1/orchestrator/jobs")).toEqual({
      public: false,
      capability: "write:job",
      anonymousRead: false,
    });
  });

  it("guards the history with read:history and never lets anonymous callers read it", () => {
    for (const route of [
      "/api/v1/orchestrator/nodes/:id/history",
      "/api/v1/orchestrator/events",
      "/api/v1/orchestrator/audit/genesis",
      "/api/v1/orchestrator/audit/chain",
      "/api/v1/orchestrator/audit/checkpoints",
    ])
      expect(routeAccess("GET", route), route).toEqual({
        public: false,
        capability: "read:history",
        anonymousRead: false,
      });
  });

  it("guards /metrics with read:agent and never lets anonymous callers scrape it", () => {
    expect(routeAccess("GET", "/metrics")).toEqual({ public: false, capability: "read:agent", anonymousRead: false });
    expect(routeAccess("POST", "/metrics")).toEqual({ public: false, capability: "write:node", anonymousRead: false });
  });

  it("needs write:node for routes outside the map, as Bacalhau does, and matches prefixes on whole segments", () => {
    expect(routeAccess("GET", "/api/v1/secret")).toEqual({
      public: false,
      capability: "write:node",
      anonymousRead: false,
    });
    expect(routeAccess("GET", "/api/v1/orchestrator/nodesx")).toEqual({
      public: false,
      capability: "write:node",
      anonymousRead: false,
    });
    expect(routeAccess("GET", "/api/v1/agent/alive/x")).toEqual({
      public: false,
      capability: "read:agent",
      anonymousRead: true,
    });
  });
});
