import { existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ExecutionInput } from "../../../src/compute/executor/executor.ts";
import { ExecutionInputs } from "../../../src/compute/inputs/execution-inputs.ts";
import { tempDir } from "../../support/fixtures.ts";

const limits = { maxBytes: 1024, timeoutMs: 1_000 };
const spec = (...inputs: ExecutionInput[]) => ({
  executionId: "e-1",
  image: "busybox",
  resources: { cpuMillis: 100, memoryBytes: 1 << 20 },
  inputs,
});
const local = (sourcePath: string, target = "/data", readWrite = false): ExecutionInput => ({
  type: "localDirectory",
  sourcePath,
  readWrite,
  target,
});

describe("a node's input sources", () => {
  const root = tempDir("shoal-inputs-unit-");
  mkdirSync(join(root, "allowed", "set"), { recursive: true });
  mkdirSync(join(root, "private"));
  symlinkSync(join(root, "private"), join(root, "allowed", "escape"));
  const inputs = new ExecutionInputs({
    allowListedLocalPaths: [`${root}/allowed/**`, `${root}/allowed/set:rw`],
    downloadDir: join(root, "downloads"),
    limits,
  });

  it("advertises localDirectory only with an allow-list", () => {
    expect(inputs.storageSources).toEqual(["localDirectory", "urlDownload"]);
    const none = new ExecutionInputs({ allowListedLocalPaths: [], downloadDir: root, limits });
    expect(none.storageSources).toEqual(["urlDownload"]);
  });

  it("refuses, before anything runs, what the list does not allow and paths that are not plain absolute ones", () => {
    expect(inputs.refusal(spec(local(`${root}/allowed/set`, "/d", true)))).toBeUndefined();
    expect(inputs.refusal(spec(local(`${root}/private`)))?.message).toBe(
      `volume ${root}/private is not allowlisted (verify the node's Compute.AllowListedLocalPaths)`,
    );
    expect(inputs.refusal(spec(local(`${root}/allowed/other`, "/d", true)))?.message).toBe(
      `volume ${root}/allowed/other is not granted write access (verify the node's Compute.AllowListedLocalPaths)`,
    );
    expect(inputs.refusal(spec(local(`${root}/allowed/../private`)))?.kind).toBe("BadRequest");
    expect(inputs.refusal(spec(local(`${root}/allowed/set`, "rel")))?.message).toBe(
      'execution e-1: input target "rel" must be an absolute path (starting with /)',
    );
  });

  it("mounts a directory read-only unless asked; refuses a link out of the list, and a missing path", async () => {
    const signal = new AbortController().signal;
    expect(await inputs.prepare(spec(local(`${root}/allowed/set`)), signal)).toEqual({
      mounts: [{ source: `${root}/allowed/set`, target: "/data", readOnly: true }],
    });
    const escaped = await inputs.prepare(spec(local(`${root}/allowed/escape`)), signal);
    expect("error" in escaped && escaped.error.message).toBe(
      `volume ${root}/private is not allowlisted (verify the node's Compute.AllowListedLocalPaths): ` +
        `${root}/allowed/escape leads to ${root}/private`,
    );
    const missing = await inputs.prepare(spec(local(`${root}/allowed/gone`)), signal);
    expect("error" in missing && missing.error.message).toBe(
      `volume ${root}/allowed/gone does not exist and creation is not allowed`,
    );
  });

  it("after a restart, removes the downloads of every execution that no longer runs", async () => {
    for (const id of ["e-running", "e-ended"]) {
      mkdirSync(join(root, "downloads", id, "0"), { recursive: true });
      writeFileSync(join(root, "downloads", id, "0", "f.txt"), "x");
    }
    await inputs.prune(new Set(["e-running"]));
    expect(existsSync(join(root, "downloads", "e-running", "0", "f.txt"))).toBe(true);
    expect(existsSync(join(root, "downloads", "e-ended"))).toBe(false);
  });
});
