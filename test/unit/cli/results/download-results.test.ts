import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiClient } from "../../../../src/cli/api-client.ts";
import { downloadResults, type ResultSpec } from "../../../../src/cli/results/download-results.ts";
import { tempDir } from "../../../support/fixtures.ts";
import { readTree, treeIn, writeTree } from "../../../support/file-tree.ts";

/** Archives as a node publishes them (a gzip-compressed tar of the result's files), served by path. */
const archives = new Map<string, Buffer>();
let server: Server;
let api: ApiClient;

function published(executionId: string, files: Record<string, string>, tamper = false): ResultSpec {
  const archive = execFileSync("tar", ["-czf", "-", "-C", treeIn("shoal-result-", files), "."]);
  const path = `/api/v1/orchestrator/jobs/j-1/results/${executionId}`;
  archives.set(path, tamper ? Buffer.concat([archive.subarray(0, -1), Buffer.from([archive.at(-1)! ^ 1])]) : archive);
  const SHA256 = createHash("sha256").update(archive).digest("hex");
  return {
    Type: "urlDownload",
    Params: { URL: `http://ignored${path}`, ExecutionID: executionId, Bytes: archive.length, SHA256 },
  };
}

beforeAll(async () => {
  server = createServer((request, response) => {
    const archive = archives.get(request.url?.replace(/\/cut$/, "") ?? "");
    response.writeHead(archive ? 200 : 404, { "content-type": "application/gzip" });
    // The connection dropped half-way.
    if (archive && request.url?.endsWith("/cut")) response.write(archive.subarray(0, 10), () => response.destroy());
    else response.end(archive);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  api = new ApiClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const OPTIONS = { maxBytes: 1024 * 1024, raw: false };

describe("downloading a job's results", () => {
  it("two executions' results merged into the directory, beside what it held", async () => {
    const dir = tempDir("shoal-get-");
    writeTree(dir, { "mine.txt": "kept" });
    const results = [
      published("e-1", { stdout: "one\n", stderr: "", exitCode: "0", "outputs/1.txt": "1" }),
      published("e-2", { stdout: "two\n", stderr: "", exitCode: "0", "outputs/2.txt": "2" }),
    ];
    await downloadResults(api, results, dir, OPTIONS);
    expect(readTree(dir)).toEqual({
      "mine.txt": "kept",
      stdout: "one\ntwo\n",
      stderr: "",
      exitCode: "0\n0",
      "outputs/1.txt": "1",
      "outputs/2.txt": "2",
    });
  });

  it("--raw: each archive as its node published it, under raw/", async () => {
    const dir = tempDir("shoal-get-");
    const results = [published("e-1", { "outputs/a": "1" }), published("e-2", { "outputs/a": "2" })];
    await downloadResults(api, results, dir, { ...OPTIONS, raw: true });
    expect(Object.keys(readTree(dir)).sort()).toEqual(["raw/e-1.tar.gz", "raw/e-2.tar.gz"]);
    expect(readFileSync(join(dir, "raw", "e-2.tar.gz"))).toEqual(
      archives.get("/api/v1/orchestrator/jobs/j-1/results/e-2"),
    );
  });

  it("a failure half-way leaves the directory as it was: no file of the results, no staging", async () => {
    const dir = tempDir("shoal-get-");
    writeTree(dir, { "mine.txt": "kept" });
    const clash = [published("e-1", { "outputs/a": "1" }), published("e-2", { "outputs/a": "2" })];
    await expect(downloadResults(api, clash, dir, OPTIONS)).rejects.toThrow(/outputs\/a is in more than one/);
    const tampered = [published("e-3", { "outputs/b": "3" }), published("e-4", { "outputs/c": "4" }, true)];
    await expect(downloadResults(api, tampered, dir, OPTIONS)).rejects.toThrow(/is not what its node published/);
    const big = [published("e-5", { "outputs/d": "5" }), published("e-6", { big: "x".repeat(2000) })];
    await expect(downloadResults(api, big, dir, { ...OPTIONS, maxBytes: 1000 })).rejects.toThrow(/\(--max-size\)/);
    const gone = [published("e-7", {}), { ...published("e-8", {}), Params: { URL: "http://x/nowhere", Bytes: 1 } }];
    await expect(downloadResults(api, gone, dir, OPTIONS)).rejects.toMatchObject({ name: "ApiError", status: 404 });
    const cut = published("e-9", { "outputs/e": "9" });
    const dropped = [{ ...cut, Params: { ...cut.Params, URL: `${String(cut.Params.URL)}/cut` } }];
    await expect(downloadResults(api, dropped, dir, OPTIONS)).rejects.toThrow(/e-9\/cut was cut (off|short)/);
    expect(readTree(dir)).toEqual({ "mine.txt": "kept" });
  });

  it("refuses to overwrite what the directory holds, changing nothing", async () => {
    const dir = tempDir("shoal-get-");
    writeTree(dir, { "outputs/a": "mine" });
    const results = [published("e-1", { stdout: "x", "outputs/a": "theirs", "outputs/b": "b" })];
    await expect(downloadResults(api, results, dir, OPTIONS)).rejects.toThrow(
      `cannot merge results as output already exists: ${join(dir, "outputs", "a")}. Use another --output-dir`,
    );
    expect(readTree(dir)).toEqual({ "outputs/a": "mine" });
  });
});
