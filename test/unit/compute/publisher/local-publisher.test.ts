import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { unpackTarGz } from "../../../../src/cli/results/unpack-tar-gz.ts";
import { ExecutionResults } from "../../../../src/compute/publisher/execution-results.ts";
import { LocalPublisher } from "../../../../src/compute/publisher/local-publisher.ts";
import { ResultStaging } from "../../../../src/compute/publisher/result-staging.ts";
import { BLOCK, encodeTarHeader } from "../../../../src/compute/publisher/tar-header.ts";
import type { WorkTask } from "../../../../src/transport/work-messages.ts";
import { helloOutput } from "../../../support/run-output.ts";

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "shoal-results-"));
  dirs.push(dir);
  return dir;
};
afterEach(() => dirs.splice(0).forEach((d) => execFileSync("rm", ["-rf", d])));

const ID = "e-00000000-0000-4000-8000-000000000001";
const task = (paths: WorkTask["ResultPaths"]): WorkTask => ({
  Engine: { Type: "docker", Image: "busybox" },
  Resources: { CPUMillis: 100, MemoryBytes: 64 * 1024 * 1024 },
  Network: "None",
  ExecutionTimeout: 0,
  Publisher: { Type: "local" },
  ResultPaths: paths,
});
const output = helloOutput;

function node(maxBytes = 1024 * 1024) {
  const root = tempDir();
  const publisher = new LocalPublisher(join(root, "results"));
  return {
    root,
    publisher,
    results: new ExecutionResults(new ResultStaging(join(root, "staging"), maxBytes), [publisher]),
  };
}

async function* fileChunks(path: string): AsyncGenerator<Uint8Array> {
  yield readFileSync(path);
}

const tree = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .map((e) => `${join(e.parentPath, e.name).slice(dir.length + 1)}${e.isDirectory() ? "/" : ""}`)
    .sort();

describe("the local publisher", () => {
  it(
    "archives the result paths with stdout, stderr and exitCode (Bacalhau's layout) as a tar.gz that " +
      "unpacks the same",
    async () => {
      const { results, publisher, root } = node();
      const mounts = await results.prepare(ID, task([{ Name: "outputs", Path: "/outputs" }]));
      expect(mounts).toEqual([
        { hostPath: expect.stringMatching(/staging\/e-[^/]+\/outputs$/), containerPath: "/outputs" },
      ]);
      const out = mounts[0]!.hostPath;
      const long = `${"d".repeat(90)}/${"f".repeat(90)}.txt`;
      mkdirSync(join(out, "d".repeat(90)));
      writeFileSync(join(out, long), "a long path\n");
      writeFileSync(join(out, "empty"), "");
      writeFileSync(join(out, "big.bin"), Buffer.alloc(3 * BLOCK + 7, 0xab));
      symlinkSync("/etc/passwd", join(out, "link"));

      const published = await results.publish(ID, "local", output);
      const archive = publisher.pathOf(ID);
      const bytes = readFileSync(archive);
      expect(published).toEqual({
        Type: "local",
        Params: { Name: `${ID}.tar.gz`, Bytes: bytes.length, SHA256: createHash("sha256").update(bytes).digest("hex") },
      });
      const layout = [
        "exitCode",
        "outputs/",
        "outputs/big.bin",
        `outputs/${"d".repeat(90)}/`,
        `outputs/${long}`,
        "outputs/empty",
        "stderr",
        "stdout",
      ].sort();
      // Another tar reads it: the format is the standard one, not only ours.
      expect(execFileSync("tar", ["-tzf", archive], { encoding: "utf8" }).split("\n").filter(Boolean).sort()).toEqual(
        layout,
      );

      const into = tempDir();
      const unpacked = await unpackTarGz(fileChunks(archive), into, 1024 * 1024);
      expect(unpacked.files).toBe(6);
      expect(tree(into)).toEqual(layout);
      expect(readFileSync(join(into, "stdout"), "utf8")).toBe("hello\n");
      expect(readFileSync(join(into, "exitCode"), "utf8")).toBe("0");
      expect(readFileSync(join(into, "outputs", long), "utf8")).toBe("a long path\n");
      expect(readFileSync(join(into, "outputs", "big.bin"))).toEqual(Buffer.alloc(3 * BLOCK + 7, 0xab));
      // The staging is gone once published.
      expect(readdirSync(join(root, "staging"))).toEqual([]);
    },
  );

  it("fails a result larger than the node publishes, naming the limit, and leaves nothing behind", async () => {
    const { results, root } = node(1024);
    const [mount] = await results.prepare(ID, task([{ Name: "outputs", Path: "/outputs" }]));
    writeFileSync(join(mount!.hostPath, "data"), Buffer.alloc(2048));
    await expect(results.publish(ID, "local", output)).rejects.toThrow(
      new RegExp(
        "wrote 2055 bytes of results; this node publishes at most 1KiB per execution " +
          "\\(Compute\\.Publishers\\.MaxResultBytes\\)",
      ),
    );
    expect(readdirSync(join(root, "staging"))).toEqual([]);
  });

  it("is refused by a node without the task's publisher", () => {
    const results = new ExecutionResults(new ResultStaging(tempDir(), 1), []);
    expect(results.refusal(ID, "n1", task([]))?.message).toBe(
      `execution ${ID} publishes its results with local; node n1 has none`,
    );
  });
});

describe("unpacking a downloaded result", () => {
  const archive = (name: string, data = "x") =>
    gzipSync(
      Buffer.concat([
        encodeTarHeader({ name, size: data.length, mode: 0o644, mtime: 0, type: "file" }),
        Buffer.from(data.padEnd(BLOCK, "\0")),
        Buffer.alloc(2 * BLOCK),
      ]),
    );
  async function* once(b: Buffer): AsyncGenerator<Uint8Array> {
    yield b;
  }

  it("refuses an entry that would land outside the output directory", async () => {
    for (const name of ["../escape", "a/../../escape", "/etc/escape"]) {
      const into = tempDir();
      await expect(unpackTarGz(once(archive(name)), join(into, "out"), 1024)).rejects.toThrow(
        /points outside the output directory/,
      );
      expect(readdirSync(into)).toEqual([]);
    }
  });

  it("refuses an archive larger than the download takes, and one cut short", async () => {
    await expect(unpackTarGz(once(archive("f", "0123456789")), tempDir(), 5)).rejects.toThrow(/more than 5 bytes/);
    const whole = archive("f", "abc");
    const { gunzipSync } = await import("node:zlib");
    const cut = gzipSync(gunzipSync(whole).subarray(0, BLOCK + 2));
    await expect(unpackTarGz(once(cut), tempDir(), 1024)).rejects.toThrow(/ends early/);
  });
});
