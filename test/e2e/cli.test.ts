import { describe, expect, it } from "vitest";
import { runShoal } from "../support/shoal-process.ts";

describe("shoal CLI input errors", () => {
  it("refuses bad config with the source and key named, exit 1", async () => {
    const bad = await runShoal(["serve", "-c", "API.Port=http"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('Config error: -c API.Port=http: API.Port: expected a whole number from 0 to 65535, got "http"');
    const unknown = await runShoal(["serve"], { SHOAL_ORCHESTRATOR_NODEMANAGER_DISCONNECTTIMEOUT: "soon" });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("environment variable SHOAL_ORCHESTRATOR_NODEMANAGER_DISCONNECTTIMEOUT");
  });

  it("refuses bad API.Auth.Users naming the entry, without echoing the key", async () => {
    const users = await runShoal(["serve", "-c", 'API.Auth.Users=[{"Alias":"ci","APIKey":"0123456789abcdefghijkl","Capabilities":[{"Actions":["admin"]}]}]']);
    expect(users.code).toBe(1);
    expect(users.stderr).toContain('Config error: -c API.Auth.Users=…: API.Auth.Users[0] (ci): Capabilities[0].Actions: unknown action "admin"');
    expect(users.stderr).not.toContain("0123456789abcdefghijkl");
  });

  it("refuses bad arguments with usage, exit 2", async () => {
    for (const args of [["frobnicate"], ["node", "approve"], ["node", "list", "--bogus"], ["compute", "--node-id", "a.b"], ["node", "list", "--output", "xml"]]) {
      const res = await runShoal(args);
      expect(res.code, args.join(" ")).toBe(2);
      expect(res.stderr, args.join(" ")).toMatch(/^Error: /);
    }
  });

  it("says where the API is when it cannot be reached", async () => {
    const res = await runShoal(["node", "list", "--api-port", "1"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("cannot reach the Shoal API at http://127.0.0.1:1");
  });
});
