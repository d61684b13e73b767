import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { downloadUrl } from "../../../src/compute/inputs/url-download.ts";
import { tempDir } from "../../support/fixtures.ts";

let server: Server;
let base = "";
const limits = { maxBytes: 1024, timeoutMs: 2_000 };

beforeAll(async () => {
  server = createServer((req, res) => {
    switch (req.url) {
      case "/data/table.csv":
        return void res.end("a,b\n1,2\n");
      case "/moved":
        return void res.writeHead(302, { location: "/named" }).end();
      case "/named":
        return void res.writeHead(200, { "content-disposition": 'attachment; filename="../report.txt"' }).end("r");
      case "/big":
        return void res.end("x".repeat(4096));
      case "/big-unsaid":
        // No Content-Length: the cap is found while reading.
        res.writeHead(200, { "transfer-encoding": "chunked" });
        for (let i = 0; i < 8; i++) res.write("x".repeat(512));
        return void res.end();
      case "/slow":
        return void setTimeout(() => res.end("late"), 5_000);
      default:
        return void res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe("a urlDownload on the node", () => {
  it("saves the file under the last part of its URL", async () => {
    const dir = join(tempDir(), "in");
    const file = await downloadUrl(`${base}/data/table.csv`, dir, limits);
    expect(file).toEqual({ path: join(dir, "table.csv"), name: "table.csv" });
    expect(readFileSync(file.path, "utf8")).toBe("a,b\n1,2\n");
  });

  it("after a redirect, takes the name the server gives, never a path out of the folder", async () => {
    const dir = tempDir();
    expect((await downloadUrl(`${base}/moved`, dir, limits)).name).toBe("report.txt");
  });

  it("fails on a status other than 2xx, naming it", async () => {
    await expect(downloadUrl(`${base}/nothing.txt`, tempDir(), limits)).rejects.toMatchObject({
      message: `non-200 response from URL (${base}/nothing.txt): 404 Not Found`,
    });
  });

  it("fails past the size cap, said or found while reading, leaving no file", async () => {
    const dir = tempDir();
    await expect(downloadUrl(`${base}/big`, dir, limits)).rejects.toMatchObject({
      kind: "PayloadTooLarge",
      message:
        `download from URL (${base}/big) is 4096 bytes, more than the 1KiB this node takes ` +
        "(InputSources.MaxDownloadSize)",
    });
    await expect(downloadUrl(`${base}/big-unsaid`, dir, limits)).rejects.toMatchObject({ kind: "PayloadTooLarge" });
    expect(readdirSync(dir)).toEqual([]);
  });

  it("fails past its time, and when nothing answers", async () => {
    await expect(downloadUrl(`${base}/slow`, tempDir(), { ...limits, timeoutMs: 300 })).rejects.toMatchObject({
      message: `download from URL (${base}/slow) did not finish within 300ms (InputSources.ReadTimeout)`,
    });
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const nobody = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/f.txt`;
    await new Promise((resolve) => closed.close(resolve));
    const dir = join(tempDir(), "none");
    await expect(downloadUrl(nobody, dir, limits)).rejects.toMatchObject({
      kind: "Unavailable",
      message: expect.stringMatching(/^failed to begin download from url .*ECONNREFUSED/),
    });
    expect(existsSync(dir)).toBe(false);
  });
});
