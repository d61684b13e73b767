import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ComputeAgent } from "../../src/compute/compute-agent.ts";
import { DockerExecutor } from "../../src/compute/executor/docker-executor.ts";
import { NODE_LABEL } from "../../src/compute/executor/docker-labels.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { dockerTestImage } from "../support/docker-test-image.ts";
import { orchestratorConfig, silentLogger } from "../support/fixtures.ts";
import { JobApiClient, type Body } from "../support/job-api-client.ts";
import { settled } from "../support/job-waits.ts";
import { TestNatsServer } from "../support/nats-server.ts";
import { startJoined } from "../support/start-joined.ts";
import { testAgent } from "../support/test-agent.ts";

/**
 * Specs constrained on the labels Bacalhau's nodes give themselves, as written for Bacalhau 1.7
 * (`Operating-System`, `Architecture`) and for 1.9 (`os_type`, `os_arch`, `name`: pkg/node/labels.go), with Go's
 * words, placed by a real orchestrator on a real compute agent that runs them in Docker. These machines are
 * Linux on amd64 (x64 in Node's words).
 */
const KEY = "placement-test-key-0123456789abcdef";
const TOKEN = "placement-join";
const NODE = "spec-node-1";
let nats: TestNatsServer;
let orchestrator: RunningOrchestrator;
let agent: ComputeAgent;
let image = "";
const docker = new Docker();
const api = new JobApiClient(
  () => orchestrator.apiUrl,
  () => KEY,
);

type Requirement = { Key: string; Operator: string; Values: string[] };
const spec = (Constraints: Requirement[]) => ({
  Name: `placed-${Math.random().toString(16).slice(2, 10)}`,
  Type: "batch",
  Count: 1,
  Constraints,
  Tasks: [
    {
      Name: "main",
      Engine: { Type: "docker", Params: { Image: image, Entrypoint: ["sh", "-c"], Parameters: ["echo placed"] } },
      Resources: { CPU: "100m", Memory: "32Mb" },
    },
  ],
});
const runOn = async (constraints: Requirement[]): Promise<Body> =>
  settled(api, await api.submit(spec(constraints)), ["Completed", "Failed"]);

beforeAll(async () => {
  image = await dockerTestImage();
  nats = await TestNatsServer.start();
  orchestrator = await startOrchestrator(
    orchestratorConfig(nats.url, {
      "Orchestrator.Auth.Token": TOKEN,
      "API.Auth.Users": [{ Alias: "ops", APIKey: KEY, Capabilities: [{ Actions: ["*"] }] }],
    }),
    silentLogger,
  );
  const executor = new DockerExecutor({
    nodeId: NODE,
    capacity: { cpuMillis: 1000, memoryBytes: 512 * 1024 * 1024 },
    logger: silentLogger,
    docker,
    stopGraceSeconds: 0,
  });
  agent = testAgent({ nodeId: NODE, orchestrators: [nats.url], token: TOKEN, executor, labels: { zone: "a" } });
  await startJoined(agent, orchestrator.manager, NODE);
}, 90_000);

afterAll(async () => {
  await agent?.stop();
  await orchestrator?.stop();
  await nats?.stop();
  const left = await docker.listContainers({ all: true, filters: { label: [`${NODE_LABEL}=${NODE}`] } });
  for (const c of left) await docker.getContainer(c.Id).remove({ force: true });
});

describe("constraints on the node's own labels", () => {
  it("the node reports Bacalhau 1.9's and 1.7's keys with Go's words", async () => {
    const node = (await api.call("GET", `/api/v1/orchestrator/nodes/${NODE}`)).body.Node as Body;
    expect(node.Info.Labels).toMatchObject({
      name: NODE,
      os_type: "linux",
      os_arch: "amd64",
      "Operating-System": "linux",
      Architecture: "amd64",
      zone: "a",
    });
    expect(node.Info.BacalhauVersion).toMatchObject({ GOOS: "linux", GOARCH: "amd64" });
  });

  it.each([
    ["1.7", [{ Key: "Architecture", Operator: "=", Values: ["amd64"] }]],
    ["1.7", [{ Key: "Operating-System", Operator: "=", Values: ["linux"] }]],
    ["1.9", [{ Key: "os_arch", Operator: "=", Values: ["amd64"] }]],
    ["1.9", [{ Key: "os_type", Operator: "in", Values: ["linux", "darwin"] }]],
    ["1.9", [{ Key: "name", Operator: "=", Values: [NODE] }]],
  ])(
    "a spec for Bacalhau %s constrained on %j runs on the node",
    async (_version, constraints) => {
      const done = await runOn(constraints);
      expect(done.Job.State.StateType).toBe("Completed");
      expect(done.Executions.Items[0]).toMatchObject({ NodeID: NODE, RunOutput: { Stdout: "placed\n" } });
    },
    60_000,
  );

  it.each([
    [{ Key: "Architecture", Operator: "=", Values: ["x64"] }],
    [{ Key: "os_arch", Operator: "=", Values: ["arm64"] }],
  ])(
    "a spec constrained on %j, which the node does not match, is never placed",
    async (constraint) => {
      const done = await runOn([constraint]);
      expect(done.Job.State.StateType).toBe("Failed");
      expect(done.Executions.Items).toEqual([]);
    },
    60_000,
  );

  it("an operator's label goes over the node's own (docs/nodes.md), until it is reset", async () => {
    const label = (body: Body) => api.call("PUT", `/api/v1/orchestrator/nodes/${NODE}`, { Action: "label", ...body });
    const amd64 = [{ Key: "os_arch", Operator: "=", Values: ["amd64"] }];
    expect((await label({ Labels: { os_arch: "arm64" } })).status).toBe(200);
    expect((await runOn(amd64)).Job.State.StateType).toBe("Failed");
    expect((await label({ ResetLabels: ["os_arch"] })).status).toBe(200);
    expect((await runOn(amd64)).Job.State.StateType).toBe("Completed");
  }, 60_000);
});
