import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Schema } from "effect";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/config/config-error.ts";
import { loadConfig } from "../../../src/config/load-config.ts";
import { NODE_ID_RULE, isNodeId } from "../../../src/events/catalog/node-id.ts";
import { NodeId } from "../../../src/events/catalog/node-info.ts";
import { StartupError } from "../../../src/errors/startup-error.ts";
import { resolveNodeIdentity } from "../../../src/orchestrator/node-identity.ts";
import { tempDir } from "../../support/fixtures.ts";

const GOOD = ["node-0", "n-3f6c1d2e-0b7a-4c1e-9d7e-2a1b3c4d5e6f", "A", "9_x", "x".repeat(128)];
const BAD = ["", " ", "bad.id", "-lead", "_lead", "a b", "a*", "a>", "x".repeat(129), "é", "node-1\n"];

describe("the node id rule", () => {
  it("is the protocol's: the NodeId schema and isNodeId agree on every case", () => {
    const schemaAccepts = (id: string) => Schema.is(NodeId)(id);
    for (const id of GOOD) expect([isNodeId(id), schemaAccepts(id)], id).toEqual([true, true]);
    for (const id of BAD) expect([isNodeId(id), schemaAccepts(id)], JSON.stringify(id)).toEqual([false, false]);
  });
});

describe("NodeID from config", () => {
  it("refuses a bad id from -c, the environment or YAML, naming the source", () => {
    expect(() => loadConfig({ settings: ["NodeID=bad.id"], env: {} })).toThrow(
      new ConfigError(`-c NodeID=bad.id: NodeID: "bad.id" is not a valid node id: ${NODE_ID_RULE}`),
    );
    expect(() => loadConfig({ env: { SHOAL_NODEID: "a b" } })).toThrow(
      /environment variable SHOAL_NODEID: NodeID: "a b" is not a valid node id/,
    );
    const file = join(tempDir(), "c.yaml");
    writeFileSync(file, "NodeID: 'x.y'\n");
    expect(() => loadConfig({ files: [file], env: {} })).toThrow(/c\.yaml: NodeID: "x\.y" is not a valid node id/);
  });

  it("accepts a valid id, and empty (generate one)", () => {
    expect(loadConfig({ settings: ["NodeID=node-7"], env: {} }).NodeID).toBe("node-7");
    expect(loadConfig({ env: { SHOAL_NODEID: "" } }).NodeID).toBe("");
  });
});

describe("the node-id file", () => {
  it("is generated once, atomically, and kept", () => {
    const dir = tempDir();
    const id = resolveNodeIdentity("", dir);
    expect(isNodeId(id)).toBe(true);
    expect(id).toMatch(/^n-[0-9a-f-]{36}$/);
    expect(readFileSync(join(dir, "node-id"), "utf8")).toBe(`${id}\n`);
    expect(readdirSync(dir)).toEqual(["node-id"]); // no temporary file left behind
    expect(resolveNodeIdentity("", dir)).toBe(id);
  });

  it("refuses an empty or bad file, and leaves it as it is", () => {
    for (const content of ["", "\n", "bad.id\n", "two words\n"]) {
      const dir = tempDir();
      writeFileSync(join(dir, "node-id"), content);
      expect(() => resolveNodeIdentity("", dir), JSON.stringify(content)).toThrow(StartupError);
      expect(() => resolveNodeIdentity("", dir)).toThrow(
        /node-id holds this node's id, but .* is not a valid node id.*set -c NodeID=<id>/,
      );
      expect(readFileSync(join(dir, "node-id"), "utf8")).toBe(content);
    }
  });

  it("is not consulted nor created when NodeID is configured, which is checked too", () => {
    const dir = tempDir();
    expect(resolveNodeIdentity("node-3", dir)).toBe("node-3");
    expect(existsSync(join(dir, "node-id"))).toBe(false);
    expect(() => resolveNodeIdentity("bad.id", dir)).toThrow(
      new StartupError(`NodeID: "bad.id" is not a valid node id: ${NODE_ID_RULE}`),
    );
  });
});
