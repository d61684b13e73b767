import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { dockerTestImage } from "../support/docker-test-image.ts";
import { tempDir } from "../support/fixtures.ts";
import { freePort } from "../support/nats-server.ts";
import { ShoalProcess, runShoal, waitFor } from "../support/shoal-process.ts";

/**
 * Operator controls with real processes: `shoal serve` under manual approval, `shoal compute`
 * agents running jobs in Docker, and the CLI. A pre-authorisation made before the node exists
 * survives an orchestrator restart and lets the node in APPROVED while another stays PENDING;
 * a cordon keeps a job off its node (queued, naming the reason) until the uncordon; an
 * operator label makes a queued job land.
 */
describe("node operator controls, end to end", { timeout: 180_000 }, () => {
  const dataDir = tempDir("shoal-e2e-ops-");
  const processes: ShoalProcess[] = [];
  let apiPort = 0;
  let natsPort = 0;
  let cliEnv: Record<string, string> = {};
  let image = "";

  const startServe = async () => {
    const p = ShoalProcess.start([
      "serve",
      ...["-c", `DataDir=${dataDir}`, "-c", "NodeID=node-0", "-c", "API.Host=127.0.0.1", "-c", `API.Port=${apiPort}`],
      ...[
        "-c",
        "Orchestrator.Host=127.0.0.1",
        "-c",
        `Orchestrator.Port=${natsPort}`,
        "-c",
        "Orchestrator.NodeManager.ManualApproval=true",
      ],
    ]);
    processes.push(p);
    await p.waitForOutput("orchestrator node-0 is running");
    return p;
  };
  const startCompute = (id: string, labels: string) => {
    const p = ShoalProcess.start([
      "compute",
      "--node-id",
      id,
      "--labels",
      labels,
      "-c",
      `DataDir=${join(dataDir, id)}`,
      "-c",
      `Compute.Orchestrators=nats://127.0.0.1:${natsPort}`,
      "-c",
      `Compute.Auth.Token=${readFileSync(join(dataDir, "credentials", "join-token"), "utf8").trim()}`,
      "-c",
      "Compute.Heartbeat.Interval=500ms",
      "-c",
      "Compute.Heartbeat.ResourceUpdateInterval=500ms",
      "-c",
      "Compute.AllocatedCapacity.CPU=1",
      "-c",
      "Compute.AllocatedCapacity.Memory=256Mi",
    ]);
    processes.push(p);
    return p;
  };
  const shoal = (args: string[]) => runShoal(args, cliEnv);
  const nodes = async () => {
    const res = await shoal(["node", "list", "--output", "json"]);
    if (res.code !== 0) throw new Error(res.stderr);
    return (JSON.parse(res.stdout) as { Nodes: { Info: { NodeID: string }; Membership: string; Cordoned: boolean }[] })
      .Nodes;
  };
  const api = async (method: string, path: string, body?: unknown): Promise<any> => {
    const key = readFileSync(join(dataDir, "credentials", "api-admin-key"), "utf8").trim();
    const res = await fetch(`http://127.0.0.1:${apiPort}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return res.json();
  };
  const submit = async (constraints: unknown[]): Promise<string> => {
    const Job = {
      Type: "batch",
      Constraints: constraints,
      Tasks: [
        {
          Name: "main",
          Engine: { Type: "docker", Params: { Image: image, Entrypoint: ["sh", "-c"], Parameters: ["echo placed"] } },
          Resources: { CPU: "250m", Memory: "32Mb" },
          Timeouts: { QueueTimeout: 600 },
        },
      ],
    };
    const res = await api("PUT", "/api/v1/orchestrator/jobs", { Job });
    expect(res.JobID, JSON.stringify(res)).toBeTypeOf("string");
    return res.JobID as string;
  };
  const jobIn = async (jobId: string, states: string[]) => {
    let last: any;
    await waitFor(
      async () => {
        last = await api("GET", `/api/v1/orchestrator/jobs/${jobId}?include=executions`);
        return states.includes(last?.Job?.State?.StateType);
      },
      60_000,
      () => `job ${jobId} in ${states.join("/")}, last ${JSON.stringify(last?.Job?.State)}`,
    );
    return last;
  };

  afterAll(async () => {
    for (const p of processes) if (p.child.exitCode === null) await p.kill("SIGTERM");
  });

  it("pre-authorises nodes that do not exist yet; bad usage exits 2", async () => {
    image = await dockerTestImage();
    apiPort = await freePort();
    natsPort = await freePort();
    cliEnv = { SHOAL_API_HOST: "127.0.0.1", SHOAL_API_PORT: String(apiPort), SHOAL_DATADIR: dataDir };
    await startServe();
    // ops-a's key, made on its machine before it ever starts (shoal compute --show-key), pins its pre-authorisation.
    const shown = await shoal([
      "compute",
      "--node-id",
      "ops-a",
      "--show-key",
      "-c",
      `DataDir=${join(dataDir, "ops-a")}`,
    ]);
    const key = /\b(U[A-Z2-7]{55})\b/.exec(shown.stdout)?.[1];
    expect(key, shown.stdout + shown.stderr).toBeDefined();
    const pre = await shoal([
      "node",
      "preauthorize",
      "ops-a",
      "--public-key",
      key as string,
      "--reason",
      "rack 7 delivery",
    ]);
    expect(pre).toMatchObject({ code: 0, stdout: "Ok\n" });
    expect(await shoal(["node", "preauthorize", "ops-b"])).toMatchObject({ code: 0, stdout: "Ok\n" });
    expect(await shoal(["node", "preauthorize", "ops-b"])).toMatchObject({
      code: 0,
      stdout: "Ok: node already pre-authorised\n",
    });
    // ops-c is pre-authorised, then no longer: it will stay PENDING.
    expect(await shoal(["node", "preauthorize", "ops-c"])).toMatchObject({ code: 0 });
    expect(await shoal(["node", "preauthorize", "ops-c", "--revoke", "-m", "order cancelled"])).toMatchObject({
      code: 0,
      stdout: "Ok\n",
    });
    expect(await shoal(["node", "preauthorize", "ops-c", "--revoke"])).toMatchObject({
      code: 1,
      stderr: "Failed to revoke the pre-authorisation of node ops-c: node ops-c has no pre-authorisation to revoke\n",
    });

    for (const args of [
      ["node", "cordon"],
      ["node", "cordon", "a", "b"],
      ["node", "label", "ops-a"],
      ["node", "label", "ops-a", "novalue"],
      ["node", "preauthorize", "ops-a", "--revoke", "--public-key", "UX"],
      ["node", "cordon", "ops-a", "--remove", "zone"],
      ["node", "list", "--filter-cordoned", "maybe"],
      ["node", "cordon", "ops-a", "--reason", "a", "-m", "b"],
    ]) {
      const res = await shoal(args);
      expect(res.code, `${args.join(" ")}: ${res.stderr}`).toBe(2);
      expect(res.stderr).toContain("Error: ");
    }
  });

  it("the pre-authorisation survives a restart: the pre-authorised nodes join APPROVED, another stays PENDING", async () => {
    const serve = processes[0] as ShoalProcess;
    expect(await serve.kill("SIGTERM")).toBe(0);
    await startServe();
    startCompute("ops-a", "zone=a");
    startCompute("ops-b", "zone=b");
    const stranger = startCompute("ops-c", "zone=a");
    await waitFor(
      async () => (await nodes()).length === 4,
      60_000,
      () => "4 nodes listed",
    );
    const membership = Object.fromEntries((await nodes()).map((n) => [n.Info.NodeID, n.Membership]));
    expect(membership).toEqual({ "node-0": "APPROVED", "ops-a": "APPROVED", "ops-b": "APPROVED", "ops-c": "PENDING" });
    const history = await shoal(["node", "history", "ops-a"]);
    expect(history.stdout).toMatch(/NodePreauthorized\s+operator:admin\s+rack 7 delivery/);
    // Only there to stay PENDING: it takes no work, and the machine is small.
    await stranger.kill("SIGTERM");
  });

  it("a cordoned node takes no new job: it queues naming the reason, and lands after the uncordon", async () => {
    expect(await shoal(["node", "cordon", "ops-a", "--reason", "disk check"])).toMatchObject({
      code: 0,
      stdout: "Ok\n",
    });
    const table = await shoal(["node", "list"]);
    expect(table.stdout).toMatch(/ops-a\s+Compute\s+APPROVED\s+HEALTHY\s+cordoned/);
    expect(table.stdout).toMatch(/ops-b\s+Compute\s+APPROVED\s+HEALTHY\s+eligible/);
    expect((await shoal(["node", "list", "--filter-cordoned", "true", "--output", "json"])).stdout).toContain(
      '"ops-a"',
    );
    expect((await shoal(["node", "list", "--filter-cordoned", "true", "--output", "json"])).stdout).not.toContain(
      '"ops-b"',
    );
    const describe = await shoal(["node", "describe", "ops-a"]);
    expect(describe.stdout).toMatch(/Cordoned: true/);
    expect(describe.stdout).toMatch(/Reason: disk check/);

    const jobId = await submit([{ Key: "zone", Operator: "=", Values: ["a"] }]);
    const queued = await jobIn(jobId, ["Queued", "Failed", "Completed"]);
    expect(queued.Job.State.StateType).toBe("Queued");
    expect(queued.Job.State.Message).toContain("node is cordoned (disk check)");

    expect(await shoal(["node", "uncordon", "ops-a", "-m", "disk fine"])).toMatchObject({ code: 0, stdout: "Ok\n" });
    const done = await jobIn(jobId, ["Completed", "Failed"]);
    expect(done.Job.State.StateType).toBe("Completed");
    expect(done.Executions.Items.map((e: any) => e.NodeID)).toEqual(["ops-a"]);
  });

  it("an operator label makes a queued job land on the node it now matches", async () => {
    const jobId = await submit([{ Key: "gpu", Operator: "=", Values: ["yes"] }]);
    expect((await jobIn(jobId, ["Queued", "Failed", "Completed"])).Job.State.StateType).toBe("Queued");
    expect(
      await shoal(["node", "label", "ops-b", "gpu=yes", "--remove", "zone", "--reason", "new card"]),
    ).toMatchObject({ code: 0, stdout: "Ok\n" });
    const done = await jobIn(jobId, ["Completed", "Failed"]);
    expect(done.Job.State.StateType).toBe("Completed");
    expect(done.Executions.Items.map((e: any) => e.NodeID)).toEqual(["ops-b"]);
    const node = JSON.parse((await shoal(["node", "describe", "ops-b", "--output", "json"])).stdout);
    expect(node.OperatorLabels).toEqual({ Set: { gpu: "yes" }, Removed: ["zone"] });
    expect(node.ReportedLabels.zone).toBe("b");
    expect(node.Info.Labels.zone).toBeUndefined();
    // The effective labels select in the list too.
    expect((await shoal(["node", "list", "--labels", "gpu=yes", "--output", "json"])).stdout).toContain('"ops-b"');
  });
});
