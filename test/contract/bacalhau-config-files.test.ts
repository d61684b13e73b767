import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../support/fixtures.ts";
import { JobApiClient, type Body } from "../support/job-api-client.ts";
import { freePort } from "../support/nats-server.ts";
import { runShoal, ShoalProcess } from "../support/shoal-process.ts";

/**
 * `shoal serve` and `shoal config list` given config files written for Bacalhau 1.9
 * (test/fixtures/bacalhau/config/): they start, name on stderr each Bacalhau key they ignore, and run with the
 * values of the keys Shoal shares, as GET /api/v1/agent/config and a submitted job show. Only what cannot be used
 * on a test machine (ports, DataDir, the address) is given with -c, which wins over the files.
 */
const FIXTURES = join(import.meta.dirname, "../fixtures/bacalhau/config");
const ORCHESTRATOR = join(FIXTURES, "config-set-orchestrator.yaml");
const USERS = join(FIXTURES, "orchestrator-basic-auth.yaml");
/** The key user of Bacalhau's basic-auth config: read:node, read:agent, read:job, write:job. */
const KEY = "P7D4CBB284634DD081FAC33868436ECCL";
const warned = (file: string, key: string) =>
  `Config warning: ${file}: Bacalhau's ${key} is not a Shoal setting; ignored`;

let serve: ShoalProcess;
let apiPort = 0;
const api = new JobApiClient(
  () => `http://127.0.0.1:${apiPort}`,
  () => KEY,
);

beforeAll(async () => {
  apiPort = await freePort();
  serve = ShoalProcess.start([
    "serve",
    "--config",
    ORCHESTRATOR,
    "--config",
    USERS,
    "-c",
    `API.Port=${apiPort}`,
    "-c",
    "API.Host=127.0.0.1",
    "-c",
    `Orchestrator.Port=${await freePort()}`,
    "-c",
    "Orchestrator.Host=127.0.0.1",
    "-c",
    `DataDir=${tempDir("shoal-bacalhau-config-")}`,
  ]);
  await serve.waitForOutput("is running", 60_000);
}, 90_000);

afterAll(async () => {
  await serve?.kill("SIGTERM");
});

describe("shoal serve with Bacalhau's orchestrator config files", () => {
  it("names each Bacalhau key it ignores, once, before it starts", () => {
    for (const key of ["NameProvider", "Orchestrator.Enabled", "WebUI.Enabled", "Orchestrator.Scheduler.WorkerCount"])
      expect(serve.stderr).toContain(warned(ORCHESTRATOR, key));
    expect(serve.stderr).toContain(warned(USERS, "NameProvider"));
    expect(serve.stderr.split(warned(ORCHESTRATOR, "NameProvider")).length).toBe(2);
  });

  it("runs with the values the files share with Shoal (GET /api/v1/agent/config)", async () => {
    const res = await api.call("GET", "/api/v1/agent/config");
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      Labels: { env: "prod", region: "eu-west-1" },
      API: { Port: apiPort, Auth: { Users: expect.arrayContaining([expect.objectContaining({ Alias: "snoopy" })]) } },
      Orchestrator: {
        Auth: { Token: "<redacted>" },
        NodeManager: { ManualApproval: true, DisconnectTimeout: "30s" },
        Scheduler: { QueueBackoff: "1m" },
      },
      JobDefaults: { Batch: { Priority: 10, Task: { Resources: { CPU: "1", Memory: "2GB" } } } },
      Logging: { Level: "debug", Mode: "json" },
    });
    expect(JSON.stringify(res.body)).not.toContain("i_am_very_secret_token");
  });

  it("gives a job that sets none the file's JobDefaults", async () => {
    const spec = {
      Type: "batch",
      Tasks: [{ Name: "main", Engine: { Type: "docker", Params: { Image: "busybox:1.37.0" } } }],
    };
    const job = (await api.job(await api.submit(spec))).Job as Body;
    expect(job.Priority).toBe(10);
    expect(job.Tasks[0]).toMatchObject({
      Resources: { CPU: "1", Memory: "2gb" },
      Timeouts: { ExecutionTimeout: 1800, TotalTimeout: 3600 },
    });
  });
});

describe("shoal config list with Bacalhau's compute node config", () => {
  it("lists the shared values from the file and warns of the rest", async () => {
    const file = join(FIXTURES, "config-set-compute.yaml");
    const res = await runShoal(["config", "list", "--config", file, "-o", "json"]);
    expect(res.code, res.stderr).toBe(0);
    for (const key of ["Compute.Enabled", "Compute.AllocatedCapacity.Disk", "JobAdmissionControl.RejectNetworkedJobs"])
      expect(res.stderr).toContain(warned(file, key));
    const rows = JSON.parse(res.stdout) as { Key: string; Value: string; Source: string }[];
    const row = (key: string) => rows.find((r) => r.Key === key);
    expect(row("Compute.Orchestrators")).toEqual({
      Key: "Compute.Orchestrators",
      Value: "nats://orchestrator.example:4222",
      Source: `file ${file}`,
    });
    expect(row("Compute.Heartbeat.Interval")?.Value).toBe("5s");
    expect(row("Compute.AllocatedCapacity.Memory")?.Value).toBe("80%");
    expect(row("Labels")?.Value).toBe("gpu=false,zone=b");
  });
});
