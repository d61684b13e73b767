import { describe, expect, it } from "vitest";
import { apiRoutes, type ApiDeps } from "../../../src/api/api-server.ts";
import { API_TAGS } from "../../../src/api/api-tags.ts";
import { openApiDocument } from "../../../src/api/openapi.ts";
import { defaultConfig } from "../../../src/config/keys.ts";

/**
 * Every optional part of the API present, so that every route is declared. Only the declarations are read: no
 * handler runs, so the dependencies they would use are never reached.
 */
const everyPart = {
  auth: { users: [], anonymousAccess: "read" },
  self: {},
  config: defaultConfig(),
  feed: {},
  stream: {},
  audit: { log: undefined, membership: {} },
  auditDiff: {},
  metrics: {},
  leaves: {},
  jobs: {},
  jobLogs: {},
} as unknown as ApiDeps;

interface Operation {
  readonly operationId: string;
  readonly tags?: readonly string[];
  readonly summary?: string;
  readonly description?: string;
}
type Doc = { tags: { name: string; description: string }[]; paths: Record<string, Record<string, Operation>> };

const routes = apiRoutes(everyPart);
const doc = openApiDocument(routes) as unknown as Doc;
const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
  Object.entries(ops).map(([method, op]) => ({ what: `${method.toUpperCase()} ${path}`, op })),
);

describe("every operation of the OpenAPI document", () => {
  it("is every documented route of the real route list", () => {
    expect(operations.map(({ op }) => op.operationId).sort()).toEqual(
      routes
        .filter((r) => r.undocumented !== true)
        .map((r) => r.operationId)
        .sort(),
    );
    // Every optional part was present: the agent's config, the audit, jobs, leaves and metrics routes are in.
    expect(operations.map(({ what }) => what)).toEqual(
      expect.arrayContaining([
        "GET /api/v1/agent/config",
        "GET /api/v1/orchestrator/audit/membership",
        "GET /api/v1/orchestrator/jobs/{id}/logs",
        "POST /api/v1/orchestrator/leaves/revocations",
        "GET /metrics",
      ]),
    );
  });

  it("has tags the document describes, a one-line summary and a description of its own", () => {
    const described = new Set(doc.tags.map((t) => t.name));
    for (const { what, op } of operations) {
      expect(op.tags?.length ?? 0, what).toBeGreaterThan(0);
      for (const tag of op.tags ?? []) expect(described, `${what}: ${tag}`).toContain(tag);
      expect(op.summary ?? "", what).toMatch(/^[A-Z][^\n]{5,100}\.$/);
      expect((op.description ?? "").length, what).toBeGreaterThan(20);
      expect(op.description, what).not.toBe(op.summary);
    }
  });

  it("lists the tags in use, each once, with their descriptions, in API_TAGS' order", () => {
    const used = new Set(operations.flatMap(({ op }) => op.tags ?? []));
    expect(doc.tags.map((t) => t.name)).toEqual(Object.keys(API_TAGS).filter((name) => used.has(name)));
    for (const tag of doc.tags) expect(tag.description).toBe(API_TAGS[tag.name as keyof typeof API_TAGS]);
  });

  it("leaves out the page that renders the document", () => {
    expect(routes.some((r) => r.path === "/api/v1/docs")).toBe(true);
    expect(doc.paths["/api/v1/docs"]).toBeUndefined();
  });
});
