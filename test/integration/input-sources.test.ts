import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuthUser } from "../../src/config/auth-users.ts";
import { ExecutionInputs } from "../../src/compute/inputs/execution-inputs.ts";
import { startDockerNodeOrchestrator, type DockerNodeOrchestrator } from "../support/docker-node-orchestrator.ts";
import { dockerTestImage } from "../support/docker-test-image.ts";
import { tempDir } from "../support/fixtures.ts";
import { JobApiClient, type Body } from "../support/job-api-client.ts";
import { settled } from "../support/job-waits.ts";
import { waitFor } from "../support/shoal-process.ts";
import { shellJob } from "../support/shell-job.ts";

/**
 * Input sources on real components: a compute node running Docker with an allow-list mounts a
 * directory of its own into a job's container, downloads a file from an HTTP server on this
 * machine (the container has no network: the node fetches it) and mounts it; a directory outside
 * its list and a download that answers 404 fail the execution with what went wrong.
 */
const KEY = "inputs-key-0123456789abcdefghijklmno";
const USERS: AuthUser[] = [
  { Alias: "alice", APIKey: KEY, Capabilities: [{ Actions: ["read:job", "write:job", "read:node"] }] },
];
const nodeId = `in-${randomUUID().slice(0, 8)}`;
const root = tempDir("shoal-inputs-");
const allowed = join(root, "allowed");
const downloads = join(root, "downloads");
let image = "";
let cluster: DockerNodeOrchestrator | undefined;
let server: Server;
let baseUrl = "";
/** Once the node asked for /files/slow.txt, which never answers; once the node gave up on it. */
let slowAsked: () => void = () => {};
const slowRequest = new Promise<void>((resolve) => (slowAsked = resolve));
let slowDropped: () => void = () => {};
const slowGivenUp = new Promise<void>((resolve) => (slowDropped = resolve));
const api = new JobApiClient(
  () => cluster!.orchestrator.apiUrl,
  () => KEY,
);

beforeAll(async () => {
  mkdirSync(join(allowed, "set1"), { recursive: true });
  writeFileSync(join(allowed, "set1", "hello.txt"), "hello from the node's disk\n");
  mkdirSync(join(root, "private"));
  writeFileSync(join(root, "private", "secret.txt"), "not for jobs\n");
  server = createServer((req, res) => {
    if (req.url === "/files/slow.txt") {
      res.on("close", slowDropped);
      return slowAsked();
    }
    if (req.url === "/files/greeting.txt") res.writeHead(200, { "content-type": "text/plain" }).end("downloaded hi\n");
    else res.writeHead(404).end("no such file");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  image = await dockerTestImage();
  const inputs = new ExecutionInputs({
    allowListedLocalPaths: [`${allowed}/**`],
    downloadDir: downloads,
    limits: { maxBytes: 1024 * 1024, timeoutMs: 10_000 },
  });
  cluster = await startDockerNodeOrchestrator("shoal-inputs-", USERS, [{ id: nodeId, inputs }]);
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

const withInputs = (command: string, ...inputs: unknown[]) => {
  const job = shellJob(image, command);
  return { ...job, Tasks: [{ ...job.Tasks[0], InputSources: inputs }] };
};
const local = (SourcePath: string, Target: string, ReadWrite = false) => ({
  Source: { Type: "localDirectory", Params: { SourcePath, ReadWrite } },
  Target,
});
const url = (URL: string, Target: string) => ({ Source: { Type: "urlDownload", Params: { URL } }, Target });
const execution = (job: Body): Body => (job.Executions?.Items ?? [])[0] ?? {};
/** Until the node's download folder holds nothing (the executions' downloads removed once they ended). */
const downloadsRemoved = () =>
  waitFor(
    () => !existsSync(downloads) || readdirSync(downloads).length === 0,
    5_000,
    () => `left ${readdirSync(downloads).join()}`,
  );

describe("input sources", () => {
  it("the node advertises the storage types it reads and its publishers", async () => {
    const node = (await api.node(nodeId)).Node;
    expect(node.Info.ComputeNodeInfo.StorageSources).toEqual(["localDirectory", "urlDownload"]);
    expect(node.Info.ComputeNodeInfo.Publishers).toEqual(["local"]);
  });

  it("mounts an allow-listed directory read-only at its target: the job prints a file from it", async () => {
    const jobId = await api.submit(
      withInputs(
        "cat /data/hello.txt && (touch /data/new 2>/dev/null || echo read-only)",
        local(`${allowed}/set1`, "/data"),
      ),
    );
    const done = await settled(api, jobId, ["Completed", "Failed"]);
    expect(execution(done).RunOutput?.Stdout, JSON.stringify(execution(done))).toBe(
      "hello from the node's disk\nread-only\n",
    );
    expect(done.Job.State.StateType).toBe("Completed");
  }, 60_000);

  it("refuses a directory outside the allow-list, and writing where only reading is allowed", async () => {
    const outside = await api.submit(withInputs("cat /data/secret.txt", local(join(root, "private"), "/data")));
    const refused = await settled(api, outside, ["Failed"]);
    expect(JSON.stringify(refused)).toContain(
      `volume ${join(root, "private")} is not allowlisted (verify the node's Compute.AllowListedLocalPaths)`,
    );
    const writing = await api.submit(withInputs("true", local(`${allowed}/set1`, "/data", true)));
    const noWrite = await settled(api, writing, ["Failed"]);
    expect(JSON.stringify(noWrite)).toContain(`volume ${allowed}/set1 is not granted write access`);
  }, 60_000);

  it("downloads a URL on the node and mounts the file under its target; the container has no network", async () => {
    const jobId = await api.submit(
      withInputs(
        "cat /inputs/greeting.txt; wget -q -T 2 -O- " + baseUrl + "/files/greeting.txt || echo no-network",
        url(`${baseUrl}/files/greeting.txt`, "/inputs"),
      ),
    );
    const done = await settled(api, jobId, ["Completed", "Failed"]);
    expect(execution(done).RunOutput?.Stdout, JSON.stringify(execution(done))).toBe("downloaded hi\nno-network\n");
    // The execution's downloads are removed once it ended.
    await downloadsRemoved();
  }, 60_000);

  it("a stop ends a download under way at once, not when the download would give up", async () => {
    const jobId = await api.submit(withInputs("cat /inputs/slow.txt", url(`${baseUrl}/files/slow.txt`, "/inputs")));
    await slowRequest;
    const asked = Date.now();
    expect((await api.stop(jobId, "no longer needed")).status).toBe(200);
    await settled(api, jobId, ["Stopped"]);
    // The node drops the request when told to stop; else it would give up after 10 s (its InputSources.ReadTimeout).
    await slowGivenUp;
    expect(Date.now() - asked).toBeLessThan(8_000);
    await downloadsRemoved();
  }, 60_000);

  it("fails the execution when the download answers 404, naming the status", async () => {
    const jobId = await api.submit(
      withInputs("cat /inputs/missing.txt", url(`${baseUrl}/files/missing.txt`, "/inputs")),
    );
    const failed = await settled(api, jobId, ["Failed"]);
    expect(execution(failed).ComputeState?.Message).toContain(
      `non-200 response from URL (${baseUrl}/files/missing.txt): 404 Not Found`,
    );
  }, 60_000);
});

describe("a node that reads no input sources", () => {
  const bare = `bare-${randomUUID().slice(0, 8)}`;
  let other: DockerNodeOrchestrator | undefined;
  const client = new JobApiClient(
    () => other!.orchestrator.apiUrl,
    () => KEY,
  );
  beforeAll(async () => {
    // Executions kept in memory: it publishes no results either (its Publishers are empty).
    other = await startDockerNodeOrchestrator("shoal-no-inputs-", USERS, [{ id: bare, executionsInMemory: true }]);
  }, 60_000);
  afterAll(async () => {
    await other?.stop();
  });

  it("is not given a job with inputs: its verdict says which storage type it lacks", async () => {
    const jobId = await client.submit(
      withInputs("cat /inputs/greeting.txt", url(`${baseUrl}/files/greeting.txt`, "/in")),
    );
    const failed = await settled(client, jobId, ["Failed"]);
    expect(failed.Executions?.Items ?? []).toEqual([]);
    expect(JSON.stringify(failed)).toContain("does not support urlDownload, it reads no input sources");
  }, 60_000);

  it("is not given a job with a publisher: its verdict says it publishes none (the publishers ranker)", async () => {
    expect((await client.node(bare)).Node.Info.ComputeNodeInfo.Publishers).toEqual([]);
    const job = shellJob(image, "echo hi > /outputs/a");
    const publishing = { ...job, Tasks: [{ ...job.Tasks[0], Publisher: { Type: "local" } }] };
    const failed = await settled(client, await client.submit(publishing), ["Failed"]);
    expect(failed.Executions?.Items ?? []).toEqual([]);
    expect(JSON.stringify(failed)).toContain("does not support local, it publishes no results");
  }, 60_000);
});
