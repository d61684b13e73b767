import Fastify, { type FastifyInstance } from "fastify";
import { tempDir } from "../../support/fixtures.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Authenticator } from "../../../src/api/auth/authenticator.ts";
import { registerAuth } from "../../../src/api/auth/register-auth.ts";
import { UI_CONTENT_SECURITY_POLICY, registerUi } from "../../../src/api/ui/register-ui.ts";
import { loadUiFiles, uiDirectory, type UiFiles } from "../../../src/api/ui/ui-files.ts";

// The console as `npm run build` made it (the tests' global setup builds it when ui/ changed), served as the
// orchestrator serves it: behind the API's authentication hook, with AnonymousAccess none and no credentials.
let app: FastifyInstance;
let files: UiFiles;
let script: string;

beforeAll(async () => {
  files = loadUiFiles(uiDirectory())!;
  expect(files, `${uiDirectory()} has no index.html`).toBeDefined();
  app = Fastify();
  registerAuth(app, { users: [], anonymousAccess: "none" }, new Authenticator([]));
  registerUi(app, files);
  await app.ready();
  script = /src="\/ui\/(assets\/[^"]+\.js)"/.exec(files.get("index.html")!.body.toString())![1]!;
});
afterAll(() => app.close());

const get = (url: string, headers: Record<string, string> = {}) => app.inject({ method: "GET", url, headers });

describe("the console's files at /ui", () => {
  it("serves index.html without credentials, revalidated, with a self-only CSP, nosniff and no referrer", async () => {
    const res = await get("/ui/");
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(res.headers["cache-control"]).toBe("no-cache");
    expect(res.headers["content-security-policy"]).toBe(UI_CONTENT_SECURITY_POLICY);
    expect(UI_CONTENT_SECURITY_POLICY).toContain("script-src 'self'");
    expect(res.headers["x-content-type-options"]).toBe("nosniff");
    expect(res.headers["referrer-policy"]).toBe("no-referrer");
    expect(res.body).toContain(`src="/ui/${script}"`);
  });

  it("redirects /ui to /ui/", async () => {
    const res = await get("/ui");
    expect(res.statusCode).toBe(301);
    expect(res.headers.location).toBe("/ui/");
  });

  it("serves the hashed assets as immutable, and 304 for the ETag already held", async () => {
    const res = await get(`/ui/${script}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    expect(res.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    const again = await get(`/ui/${script}`, { "if-none-match": String(res.headers.etag) });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe("");
  });

  it("answers a page's path (a deep link, a reload) with index.html", async () => {
    for (const page of ["/ui/nodes", "/ui/nodes/n-1", "/ui/sign-in"]) {
      const res = await get(page);
      expect(res.statusCode, page).toBe(200);
      expect(res.body, page).toBe(files.get("index.html")!.body.toString());
    }
  });

  it("answers a missing asset or file with the API's 404, never with HTML", async () => {
    for (const missing of ["/ui/assets/index-gone.js", "/ui/assets/page", "/ui/favicon.ico"]) {
      const res = await get(missing);
      expect(res.statusCode, missing).toBe(404);
      expect(res.json(), missing).toMatchObject({ Code: "NotFound" });
    }
  });

  it("never reaches a file outside the build", async () => {
    for (const path of ["/ui/../package.json", "/ui/%2e%2e/package.json", "/ui/..%2fpackage.json"]) {
      const res = await get(path);
      expect(res.body, path).not.toContain('"name": "shoal"');
    }
  });
});

describe("without a build", () => {
  it("has no console to serve (the orchestrator then logs that /ui has none)", () => {
    expect(loadUiFiles(tempDir("shoal-no-ui-"))).toBeUndefined();
  });
});
