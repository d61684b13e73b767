import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dockerTestImage } from "../support/docker-test-image.ts";
import { startDockerNodeOrchestrator, type DockerNodeOrchestrator } from "../support/docker-node-orchestrator.ts";
import { JobApiClient, type Body } from "../support/job-api-client.ts";
import { executionsOf, inState, settled, until, untilExecutions } from "../support/job-waits.ts";
import { storedEvents } from "../support/stored-events.ts";

/**
 * Job specs written for Bacalhau 1.7 and 1.9 (test/fixtures/bacalhau/, each naming its source), submitted as they
 * are through the real API to a real orchestrator with two real Docker nodes, and placed where Bacalhau's node
 * selection would put them: its label constraints, and its ranking that drops a node too small for the task's
 * resources. The nodes allow the networks Bacalhau's nodes allow by default (Host and Full; Shoal's Docker
 * executor does not offer HTTP). Nothing can be pulled here, so every spec runs the local busybox test image;
 * specs whose command needs their own image run `echo placed` instead.
 */
const KEY = "spec-files-key-0123456789abcdefghij";
const JOBS = "/api/v1/orchestrator/jobs";
const GIB = 1024 ** 3;
const SMALL = "spec-small";
const LARGE = "spec-large";
const NETWORKS = ["Host", "Full"] as const;
let cluster: DockerNodeOrchestrator;
let image = "";
const api = new JobApiClient(
  () => cluster.orchestrator.apiUrl,
  () => KEY,
);

/** A fixture as Bacalhau's CLI reads it: YAML to the job it sends as JSON. */
const fixture = (file: string): Body =>
  parse(readFileSync(join(import.meta.dirname, "../fixtures/bacalhau", file), "utf8"));

/** A key of `o` as Go's decoder finds it: in any case. */
const keyOf = (o: Body, name: string): string => Object.keys(o).find((k) => k.toLowerCase() === name.toLowerCase())!;
const task = (spec: Body): Body => spec[keyOf(spec, "Tasks")][0];
const params = (spec: Body): Body => {
  const engine = task(spec)[keyOf(task(spec), "Engine")];
  return engine[keyOf(engine, "Params")];
};

/** The spec with the local image; `command` replaces one that needs the spec's own image. */
function runnable(spec: Body, command?: readonly string[]): Body {
  const p = params(spec);
  p[keyOf(p, "Image")] = image;
  if (command !== undefined) {
    p.Entrypoint = ["sh", "-c"];
    p.Parameters = command;
  }
  return spec;
}

/** The docs' examples without their inputs (ipfs: unread; directories: not listed here) or ipfs publishers. */
function withoutInputsAndResults(spec: Body): Body {
  for (const field of ["InputSources", "Publisher", "ResultPaths"]) delete task(spec)[field];
  return spec;
}
const PARAMS_META = "Tasks[0].Engine.Params.Meta is ignored: a task's meta goes in Tasks[0].Meta";
const HTTP_OFFERED =
  "Tasks[0].Network.Type: no node of this build offers network HTTP (Bacalhau's domain-filtering proxy): every node " +
  "declines the job";

const put = (spec: Body) => api.call("PUT", JOBS, { Job: spec });
const nodesOf = (job: Body): string[] => executionsOf(job).map((e: Body) => e.NodeID as string);
const stop = async (id: string) => expect((await api.stop(id, "done")).status).toBe(200);
const untilRunningOn = (id: string, nodes: readonly string[]) =>
  untilExecutions(
    api,
    id,
    (items) =>
      items.filter((e) => e.ComputeState?.StateType === 6).length === nodes.length &&
      nodes.every((n) => items.some((e) => e.NodeID === n && e.ComputeState?.StateType === 6)),
    `running on ${nodes.join(", ")}`,
    60_000,
  );

beforeAll(async () => {
  image = await dockerTestImage();
  cluster = await startDockerNodeOrchestrator(
    "shoal-spec-files-",
    [{ Alias: "ops", APIKey: KEY, Capabilities: [{ Actions: ["*"] }] }],
    [
      { id: SMALL, labels: { service: "batch" }, cpuMillis: 750, memoryBytes: 1.5 * GIB, allowedNetworks: NETWORKS },
      {
        id: LARGE,
        labels: { service: "WebService", region: "us-west-2" },
        cpuMillis: 2000,
        memoryBytes: 8 * GIB,
        allowedNetworks: NETWORKS,
      },
    ],
  );
}, 90_000);

afterAll(async () => {
  await cluster?.stop();
});

describe("Bacalhau's own spec files run as on Bacalhau", () => {
  it.each([
    ["docker.yaml", "15\n"],
    ["docker-hello.yaml", "Hello Bacalhau!\n"],
    ["hello-world.yml", "hello bacalhau world\n"],
  ])(
    "%s completes on one node with the spec's output",
    async (file, stdout) => {
      const res = await put(runnable(fixture(file)));
      expect(res.status, res.text).toBe(200);
      expect(res.body.Warnings).toEqual([]);
      const done = await settled(api, res.body.JobID, ["Completed", "Failed"]);
      expect(done.Job.State.StateType).toBe("Completed");
      expect(done.Executions.Items).toHaveLength(1);
      expect([SMALL, LARGE]).toContain(done.Executions.Items[0].NodeID);
      expect(done.Executions.Items[0].RunOutput.Stdout).toBe(stdout);
    },
    60_000,
  );

  it("the hello world with Count 2 of Bacalhau's integration tests runs once on each node", async () => {
    const res = await put(runnable(fixture("basic-hello-world-v2.yml")));
    expect(res.status, res.text).toBe(200);
    const done = await settled(api, res.body.JobID, ["Completed", "Failed"]);
    expect(done.Job.State.StateType).toBe("Completed");
    expect(nodesOf(done).sort()).toEqual([LARGE, SMALL]);
    expect(executionsOf(done).map((e: Body) => e.RunOutput.Stdout)).toEqual(Array(2).fill("hello bacalhau world2\n"));
  }, 60_000);

  it("the daemon job of Bacalhau's integration tests runs on every node", async () => {
    const res = await put(runnable(fixture("basic-daemon-job-v1.yml")));
    expect(res.status, res.text).toBe(200);
    await untilRunningOn(res.body.JobID, [SMALL, LARGE]);
    await stop(res.body.JobID);
  }, 90_000);

  it("docker-output.yaml, with a local Publisher and ResultPaths, is accepted", async () => {
    const res = await put(runnable(fixture("docker-output.yaml")));
    expect(res.status, res.text).toBe(200);
    await stop(res.body.JobID);
  }, 30_000);

  it("s3managed-publisher.yml is refused, naming the publishers this build has", async () => {
    const res = await put(runnable(fixture("s3managed-publisher.yml")));
    expect(res.status, res.text).toBe(400);
    expect(res.body.Message).toMatch(/publisher type "s3managed" is not supported: this build has local/);
  }, 30_000);
});

describe("the documentation's examples", () => {
  it('resources as the docs write them (CPU "1.0", Memory "1gb") go to the node they fit', async () => {
    const res = await put(runnable(fixture("docs-resources.yaml"), ["echo placed"]));
    expect(res.status, res.text).toBe(200);
    const done = await settled(api, res.body.JobID, ["Completed", "Failed"]);
    expect(done.Job.State.StateType).toBe("Completed");
    expect(nodesOf(done)).toEqual([LARGE]);
  }, 60_000);

  it("a GPU task with a GPU model constraint is placed on no node without one", async () => {
    const res = await put(runnable(fixture("docs-gpu.yaml"), ["echo placed"]));
    expect(res.status, res.text).toBe(200);
    const done = await settled(api, res.body.JobID, ["Completed", "Failed"]);
    expect(done.Job.State.StateType).toBe("Failed");
    expect(done.Executions.Items).toEqual([]);
  }, 60_000);

  it("docs-batch-example.yaml as written is refused for its ipfs input alone, and nothing is stored", async () => {
    const before = (await storedEvents(cluster.dataDir)).length;
    const res = await put(fixture("docs-batch-example.yaml"));
    expect(res.status).toBe(400);
    expect(res.body.Message).toContain(
      'Tasks[0].InputSources[0].Source.Type: input source type "ipfs" is not supported',
    );
    expect(res.body.Message).not.toContain("Params.Meta");
    expect((await storedEvents(cluster.dataDir)).length).toBe(before);
  });

  it.each(["docs-service-example.yaml", "docs-ops-example.yaml"])(
    "%s, its ipfs publisher taken out, is stored with its localDirectory inputs",
    async (file) => {
      const spec = fixture(file);
      for (const field of ["Publisher", "ResultPaths"]) delete task(spec)[field];
      const res = await put(runnable(spec));
      expect(res.status, res.text).toBe(200);
      const job = await api.job(res.body.JobID);
      const inputs = job.Job.Tasks[0].InputSources as Body[];
      expect(inputs.map((i) => [i.Source.Type, i.Source.Params.SourcePath, i.Target])[0]).toEqual([
        "localDirectory",
        "/data/log-orchestration/logs",
        file === "docs-ops-example.yaml" ? "/logs" : "/app/logs",
      ]);
      await stop(res.body.JobID);
    },
  );

  it("the batch example is stored as written, and waits: no node offers its HTTP network", async () => {
    const res = await put(runnable(withoutInputsAndResults(fixture("docs-batch-example.yaml")), ["echo placed"]));
    expect(res.status, res.text).toBe(200);
    expect(res.body.Warnings).toEqual([PARAMS_META, HTTP_OFFERED]);
    const queued = await until(
      api,
      res.body.JobID,
      (job) =>
        inState("Queued")(job) &&
        executionsOf(job).length === 2 &&
        executionsOf(job).every((e) => String(e.ComputeState.Message).includes("asks for network HTTP")) &&
        // Queued when the first node refused, then again when the second did: the job lacks two executions.
        String(job.Job.State.Message).includes("requested: 2"),
      "queued, both nodes asked and refused",
    );
    expect(queued.Job.State.Message).toContain("not enough nodes to run job. requested: 2");
    expect(nodesOf(queued).sort()).toEqual([LARGE, SMALL]);
    for (const e of executionsOf(queued)) expect(e.ComputeState.Message).toContain("asks for network HTTP");
    expect(queued.Job).toMatchObject({
      Name: "Batch Job Example",
      Priority: 100,
      Count: 2,
      Labels: { "Some option": "Some text" },
      Meta: { "Job purpose": "Provide detailed example of the batch job" },
      Constraints: [{ Key: "Operating-System", Operator: "=", Values: ["linux"] }],
    });
    expect(queued.Job.Tasks[0]).toMatchObject({
      // In lower case, as Bacalhau's ResourcesConfig.Normalize stores them.
      Resources: { CPU: "250m", Memory: "1gb", Disk: "100mb", GPU: "0" },
      Network: { Type: "HTTP", Domains: ["example.com", "ghcr.io"] },
      Timeouts: { QueueTimeout: 101, TotalTimeout: 301 },
    });
    await stop(res.body.JobID);
  }, 60_000);

  it("the ops example runs on the nodes its constraint (service == WebService) selects", async () => {
    const res = await put(runnable(withoutInputsAndResults(fixture("docs-ops-example.yaml")), ["echo placed"]));
    expect(res.status, res.text).toBe(200);
    expect(res.body.Warnings).toEqual([PARAMS_META, HTTP_OFFERED]);
    const done = await settled(api, res.body.JobID, ["Completed", "Failed"]);
    expect(done.Job.State.StateType).toBe("Completed");
    expect(nodesOf(done)).toEqual([LARGE]);
    expect(done.Job.Namespace).toBe("logging");
  }, 60_000);

  it("the service example is placed on the arm64 node in us-west-2 with room for 4Gb, and only there", async () => {
    const label = (body: Body) => api.call("PUT", `/api/v1/orchestrator/nodes/${LARGE}`, { Action: "label", ...body });
    expect((await label({ Labels: { Architecture: "arm64" } })).status).toBe(200);
    try {
      const spec = runnable(withoutInputsAndResults(fixture("docs-service-example.yaml")), ["sleep 600"]);
      const res = await put(spec);
      expect(res.status, res.text).toBe(200);
      expect(res.body.Warnings).toEqual([
        PARAMS_META,
        "Tasks[0].Network.Type: network Full runs only on nodes whose Compute.Docker.AllowedNetworks lists Full (a " +
          "node allows None alone unless its operator says otherwise): every other node declines the job",
        "Tasks[0].Timeouts.TotalTimeout is ignored: service jobs run until stopped",
      ]);
      // Whether it then runs depends on the engine having a bridge network for its Full network.
      const placed = await untilExecutions(api, res.body.JobID, (items) => items.length > 0, "placed");
      expect(new Set(placed.map((e) => e.NodeID))).toEqual(new Set([LARGE]));
      await stop(res.body.JobID);
    } finally {
      expect((await label({ ResetLabels: ["Architecture"] })).status).toBe(200);
    }
  }, 90_000);
});
