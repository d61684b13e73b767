import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../support/fixtures.ts";
import { runShoal } from "../support/shoal-process.ts";

describe("shoal CLI input errors", () => {
  it("refuses bad config with the source and key named, exit 1", async () => {
    const bad = await runShoal(["serve", "-c", "API.Port=http"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(
      'Config error: -c API.Port=http: API.Port: expected a whole number from 0 to 65535, got "http"',
    );
    const unknown = await runShoal(["serve"], { SHOAL_ORCHESTRATOR_NODEMANAGER_DISCONNECTTIMEOUT: "soon" });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("environment variable SHOAL_ORCHESTRATOR_NODEMANAGER_DISCONNECTTIMEOUT");
  });

  it("refuses bad API.Auth.Users naming the entry, without echoing the key", async () => {
    const users = await runShoal([
      "serve",
      "-c",
      'API.Auth.Users=[{"Alias":"ci","APIKey":"0123456789abcdefghijkl","Capabilities":[{"Actions":["admin"]}]}]',
    ]);
    expect(users.code).toBe(1);
    expect(users.stderr).toContain(
      'Config error: -c API.Auth.Users=…: API.Auth.Users[0] (ci): Capabilities[0].Actions: unknown action "admin"',
    );
    expect(users.stderr).not.toContain("0123456789abcdefghijkl");
  });

  it("refuses bad arguments with usage, exit 2", async () => {
    for (const args of [
      ["frobnicate"],
      ["node", "approve"],
      ["node", "list", "--bogus"],
      ["compute", "--node-id", "a.b"],
      ["serve", "--node-id", "a.b"],
      ["node", "list", "--api-key", "k", "--username", "u", "--password", "p"],
      ["node", "list", "--output", "xml"],
    ]) {
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

  it("shows a compute node's key and the NATS user entry for it, the same key every time", async () => {
    const dataDir = tempDir();
    const first = await runShoal(["compute", "--node-id", "edge-1", "--show-key", "-c", `DataDir=${dataDir}`]);
    expect(first.code, first.stderr).toBe(0);
    const key = /^ {2}(U[A-Z2-7]{55})$/m.exec(first.stdout)?.[1];
    expect(key).toBeDefined();
    const entry = JSON.parse(first.stdout.trim().split("\n").at(-1)!);
    expect(entry).toEqual({
      nkey: key,
      permissions: {
        publish: { allow: ["shoal.compute.edge-1.*", "shoal.join.edge-1"] },
        subscribe: { allow: ["_INBOX_NODE.edge-1.>", "shoal.work.edge-1.>"] },
      },
    });
    const seedFile = join(dataDir, "compute", "credentials", "edge-1.nkey");
    expect(statSync(seedFile).mode & 0o777).toBe(0o600);
    expect(first.stdout).not.toContain(readFileSync(seedFile, "utf8").trim());
    expect((await runShoal(["compute", "--node-id", "edge-1", "--show-key", "-c", `DataDir=${dataDir}`])).stdout).toBe(
      first.stdout,
    );
  });
});
