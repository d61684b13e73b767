import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { parse as parseYaml } from "yaml";
import { startComputeProcess } from "../support/compute-processes.ts";
import { csvRows } from "../support/csv-rows.ts";
import { dockerTestImage } from "../support/docker-test-image.ts";
import { FaultyProxy } from "../support/faulty-proxy.ts";
import { tempDir } from "../support/fixtures.ts";
import { localOrchestratorFlags } from "../support/local-orchestrator-flags.ts";
import { freePort } from "../support/nats-server.ts";
import { removeContainersOf } from "../support/node-containers.ts";
import { runShoal, SHOAL_BIN, ShoalProcess, shoalEnv, waitFor } from "../support/shoal-process.ts";

/**
 * `shoal job …` and `shoal docker run` as a user runs them: a real `shoal serve`, a real
 * `shoal compute` running containers in Docker, and every CLI call a `bin/shoal` process.
 */
const KEY = "job-cli-key-0123456789abcdefghijkl";
const USERS = [
  { Alias: "ops", APIKey: KEY, Capabilities: [{ Actions: ["read:job", "write:job", "read:node", "write:node"] }] },
];
const nodeId = `jc-${randomUUID().slice(0, 8)}`;
const orchestratorId = `jc-orch-${randomUUID().slice(0, 8)}`;
const dataDir = tempDir("shoal-jc-orch-");
let image = "";
let apiPort = 0;
let serve: ShoalProcess | undefined;
let compute: ShoalProcess | undefined;

const api = () => ["--api-host", "127.0.0.1", "--api-port", String(apiPort), "--api-key", KEY];
/** `shoal <group> <command> <API flags> …`: before the arguments, never after a `--`. */
const shoal = (args: string[]) => runShoal([...args.slice(0, 2), ...api(), ...args.slice(2)]);

type Body = Record<string, any>;
async function get(path: string): Promise<Body> {
  const res = await fetch(`http://127.0.0.1:${apiPort}${path}`, { headers: { authorization: `Bearer ${KEY}` } });
  expect(res.status, path).toBe(200);
  return (await res.json()) as Body;
}

/** `bin/shoal` with `input` on its stdin. */
function runWithStdin(args: string[], input: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(SHOAL_BIN, args, { env: shoalEnv(), stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  child.stdin.end(input);
  return new Promise((resolve) => child.once("exit", (code) => resolve({ code, stdout, stderr })));
}

const jobIdIn = (stdout: string): string => {
  const id = /Job ID: (j-[0-9a-f-]{36})/.exec(stdout)?.[1];
  expect(id, stdout).toBeDefined();
  return id as string;
};
const SMALL = ["--cpu", "250m", "--memory", "32Mb"];
const TERMINAL = new Set(["Completed", "Failed", "Stopped"]);

beforeAll(async () => {
  image = await dockerTestImage();
  apiPort = await freePort();
  const natsPort = await freePort();
  serve = ShoalProcess.start([
    "serve",
    "--node-id",
    orchestratorId,
    ...localOrchestratorFlags({ dataDir, apiPort, natsPort }),
    "-c",
    `API.Auth.Users=${JSON.stringify(USERS)}`,
    "-c",
    "Logging.Level=warn",
  ]);
  await serve.waitForOutput("is running", 60_000);
  compute = startComputeProcess({
    nodeId,
    dataDir: tempDir("shoal-jc-compute-"),
    orchestrators: `nats://127.0.0.1:${natsPort}`,
    settings: ["Compute.Docker.StopGracePeriod=1s", "Logging.Level=warn"],
    env: { SHOAL_COMPUTE_AUTH_TOKEN: readFileSync(join(dataDir, "credentials", "join-token"), "utf8").trim() },
  });
  await waitFor(
    async () =>
      (await get(`/api/v1/orchestrator/nodes`)).Nodes.some(
        (n: Body) => n.Info.NodeID === nodeId && n.Membership === "APPROVED" && n.Health === "HEALTHY",
      ),
    30_000,
    () => "compute node approved and healthy",
  );
}, 120_000);

afterAll(async () => {
  if (compute && compute.child.exitCode === null) await compute.kill("SIGTERM");
  if (serve && serve.child.exitCode === null) await serve.kill("SIGTERM");
  await removeContainersOf(nodeId);
});

it("shoal serve --node-id names the orchestrator", () => {
  expect(serve?.stdout).toContain(`Shoal orchestrator ${orchestratorId} is running.`);
});

describe("shoal docker run", () => {
  let completed = "";

  it("`docker run --wait IMAGE -- echo hi`: exit 0, the job Completed with the output, its progress on stderr", async () => {
    const res = await shoal(["docker", "run", "--wait", ...SMALL, image, "--", "echo", "hi"]);
    expect(res.code, res.stderr).toBe(0);
    completed = jobIdIn(res.stdout);
    expect(res.stdout).toContain(`Job ${completed} Completed.`);
    expect(res.stdout).toContain(`shoal job describe ${completed}`);
    // Progress, as the history records it: the job's and the execution's steps, in order.
    const progress = res.stderr.split("\n").filter((l) => /^\d\d:\d\d:\d\d\.\d{3} /.test(l));
    expect(
      progress.map((l) =>
        l
          .slice(14)
          .trim()
          .replace(/^e-[0-9a-f]{8} +/, ""),
      ),
    ).toEqual(
      expect.arrayContaining([
        "Submission       Job submitted",
        "State Update     Running",
        "Execution        Completed successfully",
        "State Update     Completed",
      ]),
    );
    expect(progress.at(-1)).toMatch(/State Update +Completed$/);
    const got = await get(`/api/v1/orchestrator/jobs/${completed}?include=executions`);
    expect(got.Job.State.StateType).toBe("Completed");
    expect(got.Job.Tasks[0].Engine.Params).toMatchObject({ Image: image, Parameters: ["echo", "hi"] });
    expect(got.Executions.Items[0].RunOutput).toMatchObject({ Stdout: "hi\n", ExitCode: 0 });
  }, 60_000);

  it("a failing command with --wait: exit 1, saying the job Failed, the exit code and what it wrote to stderr", async () => {
    const res = await shoal(["docker", "run", "--wait", ...SMALL, image, "--", "sh", "-c", "echo oops >&2; exit 3"]);
    expect(res.code).toBe(1);
    const id = jobIdIn(res.stdout);
    // Retried once on its one node, then no node is left: the scheduler's message names the last failure.
    expect(res.stderr).toMatch(
      new RegExp(
        `Error: job ${id} Failed: not enough nodes to run job[\\s\\S]*Last failure: execution e-[0-9a-f-]+ on node ${nodeId} failed: .*exited with code 3`,
      ),
    );
    expect(res.stderr).toMatch(/Execution e-[0-9a-f]{8} wrote to stderr:\noops\n/);
    expect((await get(`/api/v1/orchestrator/jobs/${id}`)).Job.State.StateType).toBe("Failed");
  }, 60_000);

  it("--wait-timeout passing first: exit 4, saying the job goes on; Ctrl+C: exit 130, the job goes on", async () => {
    const timedOut = await shoal([
      "docker",
      "run",
      "--wait",
      "--wait-timeout",
      "2s",
      ...SMALL,
      image,
      "--",
      "sleep",
      "30",
    ]);
    expect(timedOut.code).toBe(4);
    expect(timedOut.stderr).toMatch(
      /Progress tracking timed out after 2s\. The job is still running \((Pending|Running)\)\./,
    );
    const first = jobIdIn(timedOut.stdout);
    expect((await get(`/api/v1/orchestrator/jobs/${first}`)).Job.State.StateType).toBe("Running");

    const waiting = ShoalProcess.start(["docker", "run", ...api(), "--wait", ...SMALL, image, "--", "sleep", "30"]);
    await waitFor(
      () => /Execution +Running/.test(waiting.stderr),
      30_000,
      () => `progress; stderr: ${waiting.stderr}`,
    );
    expect(await waiting.kill("SIGINT")).toBe(130);
    expect(waiting.stderr).toContain("Progress tracking canceled. The job is still running.");
    const second = jobIdIn(waiting.stdout);
    expect((await get(`/api/v1/orchestrator/jobs/${second}`)).Job.State.StateType).toBe("Running");
    for (const id of [first, second]) expect((await shoal(["job", "stop", id, "--quiet"])).code).toBe(0);
  }, 60_000);

  it("--wait on a service job ends once it runs (it never completes)", async () => {
    const file = join(tempDir(), "service.yaml");
    writeFileSync(
      file,
      [
        "Type: service",
        "Tasks:",
        "  - Name: main",
        "    Engine:",
        "      Type: docker",
        "      Params:",
        `        Image: ${image}`,
        "        Parameters: [sleep, '30']",
        "    Resources: {CPU: 250m, Memory: 32Mb}",
        "",
      ].join("\n"),
    );
    const res = await shoal(["job", "run", file, "--wait"]);
    expect(res.code, res.stderr).toBe(0);
    const id = jobIdIn(res.stdout);
    expect(res.stdout).toContain(`Job ${id} Running.`);
    expect((await get(`/api/v1/orchestrator/jobs/${id}`)).Job.State.StateType).toBe("Running");
    expect((await shoal(["job", "stop", id, "--quiet"])).code).toBe(0);
  }, 60_000);

  it("waits by default: the progress on stderr, the job's end on stdout, exit 0", async () => {
    const res = await shoal(["docker", "run", ...SMALL, image, "--", "echo", "by default"]);
    expect(res.code, res.stderr).toBe(0);
    const id = jobIdIn(res.stdout);
    expect(res.stdout).toContain(`Job ${id} Completed.`);
    expect(res.stderr).toContain("Checking job status...");
    // Not a terminal: each entry a line of its own, the last the job's end.
    expect(res.stderr.trimEnd().split("\n").at(-1)).toMatch(/^\d\d:\d\d:\d\d\.\d{3} +State Update +Completed$/);
    expect((await get(`/api/v1/orchestrator/jobs/${id}`)).Job.State.StateType).toBe("Completed");
  }, 60_000);

  it("--wait=false and --wait false: print the id and how to follow the job at once; --id-only the id alone", async () => {
    for (const wait of [["--wait=false"], ["--wait", "false"]]) {
      const res = await shoal(["docker", "run", ...wait, ...SMALL, image, "--", "sleep", "30"]);
      expect(res.code, res.stderr).toBe(0);
      const id = jobIdIn(res.stdout);
      expect(res.stdout).toContain(`shoal job history ${id}`);
      expect(res.stderr).toBe("");
      expect(TERMINAL.has((await get(`/api/v1/orchestrator/jobs/${id}`)).Job.State.StateType)).toBe(false);
      expect((await shoal(["job", "stop", id, "--quiet"])).code).toBe(0);
    }
    const only = await shoal(["docker", "run", "--wait=false", "--id-only", ...SMALL, image, "--", "sleep", "30"]);
    expect(only.code, only.stderr).toBe(0);
    expect(only.stdout).toMatch(/^j-[0-9a-f-]{36}\n$/);
    expect(only.stderr).toBe("");
    expect((await shoal(["job", "stop", only.stdout.trim(), "--quiet"])).code).toBe(0);
  }, 60_000);

  it("--id-only waits without a word: the id alone on stdout, the exit status says how the job ended", async () => {
    const ok = await shoal(["docker", "run", "--id-only", ...SMALL, image, "--", "true"]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/^j-[0-9a-f-]{36}\n$/);
    expect(ok.stderr).toBe("");
    expect((await get(`/api/v1/orchestrator/jobs/${ok.stdout.trim()}`)).Job.State.StateType).toBe("Completed");
    const failed = await shoal(["docker", "run", "--id-only", ...SMALL, image, "--", "sh", "-c", "exit 5"]);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/^j-[0-9a-f-]{36}\n$/);
    expect(failed.stderr).toMatch(/^\nError: job j-[0-9a-f-]{36} Failed: /);
  }, 60_000);

  it("--follow prints the job's output as it comes (stdout to stdout, stderr to stderr) and exits as the job ended", async () => {
    const script = "echo one; sleep 1; echo two; echo err >&2; sleep 1; echo three";
    const res = await shoal(["docker", "run", "--follow", ...SMALL, image, "--", "sh", "-c", script]);
    expect(res.code, res.stderr).toBe(0);
    // stdout is the job's alone: what Shoal says goes to stderr.
    expect(res.stdout).toBe("one\ntwo\nthree\n");
    expect(res.stderr).toMatch(/^Job successfully submitted\. Job ID: j-[0-9a-f-]{36}\nWaiting for logs\.\.\./);
    expect(res.stderr).toContain("err\n");

    const failing = await shoal(["docker", "run", "-f", ...SMALL, image, "--", "sh", "-c", "echo before; exit 3"]);
    expect(failing.code).toBe(1);
    expect(failing.stdout.startsWith("before\n")).toBe(true);
    expect(failing.stderr).toMatch(/Error: job j-[0-9a-f-]{36} Failed: /);
  }, 90_000);

  it("a job stopped while it is waited for: exit 3", async () => {
    const waiting = ShoalProcess.start(["docker", "run", ...api(), ...SMALL, image, "--", "sleep", "30"]);
    await waitFor(
      () => /Execution +Running/.test(waiting.stderr),
      30_000,
      () => `progress; stderr: ${waiting.stderr}`,
    );
    expect((await shoal(["job", "stop", jobIdIn(waiting.stdout), "--quiet"])).code).toBe(0);
    expect(await waiting.exited).toBe(3);
    expect(waiting.stderr).toMatch(/Error: job j-[0-9a-f-]{36} Stopped: Stopped at user request/);
  }, 60_000);

  it("--dry-run prints Bacalhau's job as YAML, submits nothing, and `job run` runs that file", async () => {
    const before = (await get("/api/v1/orchestrator/jobs?limit=1000")).Items.length;
    const dry = await runShoal([
      "docker",
      "run",
      "--dry-run",
      ...SMALL,
      "-l",
      "team=cli,env=test",
      "--constraints",
      `zone!=b`,
      "-e",
      "GREETING=hello",
      "--timeout",
      "5m",
      "--queue-timeout",
      "30",
      "--network",
      "none",
      "--entrypoint",
      "sh,-c",
      image,
      "--",
      "echo $GREETING",
    ]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(parseYaml(dry.stdout)).toEqual({
      Type: "batch",
      Count: 1,
      Constraints: [{ Key: "zone", Operator: "!=", Values: ["b"] }],
      Labels: { team: "cli", env: "test" },
      Tasks: [
        {
          Name: "main",
          Engine: {
            Type: "docker",
            Params: { Image: image, Entrypoint: ["sh", "-c"], Parameters: ["echo $GREETING"] },
          },
          Resources: { CPU: "250m", Memory: "32Mb" },
          Timeouts: { QueueTimeout: 30, TotalTimeout: 300 },
          Env: { GREETING: "hello" },
          Network: { Type: "None" },
        },
      ],
    });
    expect((await get("/api/v1/orchestrator/jobs?limit=1000")).Items.length).toBe(before);
    const file = join(tempDir(), "job.yaml");
    writeFileSync(file, dry.stdout);
    const res = await shoal(["job", "run", file, "--wait"]);
    expect(res.code, res.stderr).toBe(0);
    const got = await get(`/api/v1/orchestrator/jobs/${jobIdIn(res.stdout)}?include=executions`);
    expect(got.Job.Labels).toEqual({ team: "cli", env: "test" });
    expect(got.Executions.Items[0].RunOutput.Stdout).toBe("hello\n");
  }, 60_000);

  it("-i/--input mounts a node's directory or downloads a URL; the spec it builds is valid", async () => {
    const dry = await runShoal([
      "docker",
      "run",
      "--dry-run",
      "-i",
      "file:///data:/inputs/data",
      "--input",
      "https://example.com:8443/a.csv",
      "-i",
      "src=file:///srv/models/,dst=/models,opt=rw=true",
      "-i",
      '"src=http://example.com/b.txt",dst=/b',
      image,
      "--",
      "ls",
    ]);
    expect(dry.code, dry.stderr).toBe(0);
    const local = (path: string, readWrite: boolean) => ({
      Type: "localDirectory",
      Params: { SourcePath: path, ReadWrite: readWrite },
    });
    const url = (u: string) => ({ Type: "urlDownload", Params: { URL: u } });
    expect(parseYaml(dry.stdout).Tasks[0].InputSources).toEqual([
      { Source: local("/data", false), Alias: "file:///data", Target: "/inputs/data" },
      { Source: url("https://example.com:8443/a.csv"), Alias: "https://example.com:8443/a.csv", Target: "/inputs" },
      { Source: local("/srv/models", true), Alias: "file:///srv/models/", Target: "/models" },
      { Source: url("http://example.com/b.txt"), Alias: "http://example.com/b.txt", Target: "/b" },
    ]);
    const file = join(tempDir(), "inputs.yaml");
    writeFileSync(file, dry.stdout);
    const valid = await runShoal(["job", "validate", file]);
    expect(valid.stdout, valid.stderr).toBe("OK\n");
  }, 30_000);
});

describe("shoal job run", () => {
  const spec = (command: string) => ({
    Name: "from-stdin",
    Type: "batch",
    Count: 1,
    Tasks: [
      {
        Name: "main",
        Engine: { Type: "docker", Params: { Image: image, Entrypoint: ["sh", "-c"], Parameters: [command] } },
        Resources: { CPU: "250m", Memory: "32Mb" },
      },
    ],
  });

  it("runs a JSON job from stdin ('-') and a YAML one from a file", async () => {
    const res = await runWithStdin(
      ["job", "run", ...api(), "-", "--wait", "--id-only"],
      JSON.stringify(spec("echo json")),
    );
    expect(res.code, res.stderr).toBe(0);
    const id = res.stdout.trim();
    expect(id).toMatch(/^j-[0-9a-f-]{36}$/);
    expect((await get(`/api/v1/orchestrator/jobs/${id}`)).Job).toMatchObject({
      Name: "from-stdin",
      State: { StateType: "Completed" },
    });

    const file = join(tempDir(), "job.yaml");
    writeFileSync(
      file,
      [
        "Name: from-yaml",
        "Type: batch",
        "Tasks:",
        "  - Name: main",
        "    Engine:",
        "      Type: docker",
        "      Params:",
        `        Image: ${image}`,
        "        Parameters: [echo, yaml]",
        "    Resources: {CPU: 250m, Memory: 32Mb}",
        "",
      ].join("\n"),
    );
    const yamlRun = await shoal(["job", "run", file, "--wait"]);
    expect(yamlRun.code, yamlRun.stderr).toBe(0);
    const got = await get(`/api/v1/orchestrator/jobs/${jobIdIn(yamlRun.stdout)}?include=executions`);
    expect(got.Job.Name).toBe("from-yaml");
    expect(got.Executions.Items[0].RunOutput.Stdout).toBe("yaml\n");
  }, 60_000);

  it("an invalid job: every problem the server names, one a line, exit 1, nothing stored", async () => {
    const before = (await get("/api/v1/orchestrator/jobs?limit=1000")).Items.length;
    const file = join(tempDir(), "bad.yaml");
    writeFileSync(
      file,
      [
        "Type: batch",
        "Count: -2",
        "Tasks:",
        "  - Name: main",
        "    Engine: {Type: docker, Params: {}}",
        "    Resources: {CPU: lots}",
        "",
      ].join("\n"),
    );
    const res = await shoal(["job", "run", file]);
    expect(res.code).toBe(1);
    expect(res.stdout).toBe("");
    const lines = res.stderr.trimEnd().split("\n");
    expect(lines[0]).toBe("Error: the job provided is invalid (3 problems):");
    expect(
      lines
        .slice(1)
        .map((l) => l.trim().split(":")[0])
        .sort(),
    ).toEqual(["Count", "Tasks[0].Engine.Params.Image", "Tasks[0].Resources.CPU"]);
    expect(res.stderr).toContain('Tasks[0].Resources.CPU: invalid CPU value: "lots"');
    expect((await get("/api/v1/orchestrator/jobs?limit=1000")).Items.length).toBe(before);
  });

  it("a submission whose answer is lost is sent again with the same IdempotencyToken: one job stored", async () => {
    const name = `lost-answer-${randomUUID().slice(0, 8)}`;
    const proxy = await FaultyProxy.start(`http://127.0.0.1:${apiPort}`, ["lose-answer"]);
    onTestFinished(() => proxy.stop());
    const res = await runWithStdin(
      ["job", "run", "--api-port", String(proxy.port), "--api-key", KEY, "-", "--wait=false", "--id-only"],
      JSON.stringify({ ...spec("echo once"), Name: name }),
    );
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain("sending the same submission again");
    expect(proxy.accepted).toBe(2);
    const stored = (await get("/api/v1/orchestrator/jobs?limit=1000")).Items.filter((j: Body) => j.Name === name);
    expect(stored.map((j: Body) => j.ID)).toEqual([res.stdout.trim()]);
  });

  it("an unchanged named job run again: refused with the hint, exit 1; --force runs it as the next version", async () => {
    const file = join(tempDir(), "named.json");
    writeFileSync(file, JSON.stringify({ ...spec("echo again"), Name: `again-${randomUUID().slice(0, 8)}` }));
    const first = await shoal(["job", "run", file, "--wait"]);
    expect(first.code, first.stderr).toBe(0);
    const id = jobIdIn(first.stdout);

    const again = await shoal(["job", "run", file, "--wait"]);
    expect(again.code).toBe(1);
    expect(again.stdout).toBe("");
    expect(again.stderr.trimEnd().split("\n")).toEqual([
      `Error: no changes detected for new job spec. Job Name: '${JSON.parse(readFileSync(file, "utf8")).Name}', Job Id: '${id}'`,
      "Hint: Use the --force flag to override this warning",
    ]);
    expect((await get(`/api/v1/orchestrator/jobs/${id}`)).Job.Version).toBe(1);

    const forced = await shoal(["job", "run", file, "--wait", "--force"]);
    expect(forced.code, forced.stderr).toBe(0);
    expect(jobIdIn(forced.stdout)).toBe(id);
    expect((await get(`/api/v1/orchestrator/jobs/${id}`)).Job).toMatchObject({
      Version: 2,
      State: { StateType: "Completed" },
    });
  }, 60_000);

  it("a file that is not YAML, an empty one, or none: exit 2 naming it", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "broken.yaml"), "Type: [batch\n");
    writeFileSync(join(dir, "empty.yaml"), "\n");
    for (const [args, text] of [
      [["job", "run", join(dir, "broken.yaml")], `${join(dir, "broken.yaml")} is not valid YAML or JSON`],
      [["job", "run", join(dir, "empty.yaml")], "is empty"],
      [["job", "run", join(dir, "missing.yaml")], "cannot read the job from"],
      [["job", "run"], "takes exactly one file"],
    ] as const) {
      const res = await shoal([...args]);
      expect(res.code, args.join(" ")).toBe(2);
      expect(res.stderr, args.join(" ")).toContain(text);
      expect(res.stderr).toContain("Run 'shoal job run --help' for usage.");
    }
  });
});

describe("shoal job list, describe, executions, history, stop", () => {
  let id = "";
  beforeAll(async () => {
    const res = await shoal([
      "docker",
      "run",
      "--wait",
      "--name",
      "listed",
      "-l",
      "suite=read",
      ...SMALL,
      image,
      "--",
      "echo",
      "described",
    ]);
    expect(res.code, res.stderr).toBe(0);
    id = jobIdIn(res.stdout);
  }, 60_000);

  it("list: Bacalhau's columns in a table; the jobs themselves in JSON and YAML; --labels filters", async () => {
    const table = await shoal(["job", "list", "--labels", "suite=read"]);
    expect(table.code, table.stderr).toBe(0);
    const [header, ...rows] = table.stdout.trimEnd().split("\n");
    expect(header?.split(/ {2,}/)).toEqual(["CREATED", "ID", "NAME", "JOB", "TYPE", "STATE"]);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.split(/ {2,}/)).toEqual([
      expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/),
      id.slice(0, 10),
      "listed",
      "docker",
      "batch",
      "Completed",
    ]);
    for (const format of ["json", "yaml"] as const) {
      const res = await shoal(["job", "list", "--labels", "suite=read", "--output", format]);
      expect(res.code, res.stderr).toBe(0);
      const items = (format === "json" ? JSON.parse(res.stdout) : parseYaml(res.stdout)) as Body[];
      expect(items.map((j) => [j.ID, j.Name, j.State.StateType])).toEqual([[id, "listed", "Completed"]]);
    }
    // csv: whole ids and RFC 3339 UTC times; --wide adds the namespace, the last change and the version.
    const job = (
      JSON.parse((await shoal(["job", "list", "--labels", "suite=read", "-o", "json"])).stdout) as Body[]
    )[0]!;
    const rfc3339 = (nanos: number) => new Date(Math.floor(nanos / 1e6)).toISOString();
    const csv = await shoal(["job", "list", "--labels", "suite=read", "-o", "csv", "--wide"]);
    expect(csv.code, csv.stderr).toBe(0);
    expect(csvRows(csv.stdout)).toEqual([
      ["CREATED", "ID", "NAME", "NAMESPACE", "JOB", "TYPE", "STATE", "MODIFIED", "VERSION"],
      [
        rfc3339(job.CreateTime),
        id,
        "listed",
        job.Namespace,
        "docker",
        "batch",
        "Completed",
        rfc3339(job.ModifyTime),
        "1",
      ],
    ]);
    const wide = await shoal(["job", "list", "--labels", "suite=read", "-o", "wide", "--hide-header"]);
    expect(
      wide.stdout
        .trimEnd()
        .split("\n")
        .map((l) => l.split(/ {2,}/)[1]),
    ).toEqual([id]);
  });

  it("list pages with --limit and --next-token, as the hint says", async () => {
    const first = await shoal(["job", "list", "--limit", "1", "--order-reversed"]);
    expect(first.code, first.stderr).toBe(0);
    const hint = /\tshoal job list (.*)$/m.exec(first.stdout)?.[1];
    expect(hint, first.stdout).toMatch(/--order-reversed --limit 1 --next-token \S+$/);
    const second = await shoal(["job", "list", ...(hint as string).split(" ")]);
    expect(second.code, second.stderr).toBe(0);
    const rowId = (out: string) => out.split("\n")[1]?.split(/ {2,}/)[1];
    expect(rowId(second.stdout)).toBeDefined();
    expect(rowId(second.stdout)).not.toBe(rowId(first.stdout));
  });

  it("describe: YAML by default ({Job, Executions, History}), JSON, and Bacalhau's summary as a table", async () => {
    const yamlOut = await shoal(["job", "describe", id]);
    expect(yamlOut.code, yamlOut.stderr).toBe(0);
    const fromYaml = parseYaml(yamlOut.stdout) as Body;
    expect(fromYaml.Job).toMatchObject({ ID: id, Name: "listed", State: { StateType: "Completed" } });
    expect(fromYaml.Executions.Items[0].RunOutput.Stdout).toBe("described\n");
    expect(fromYaml.History.Items.length).toBeGreaterThanOrEqual(6);
    const json = await shoal(["job", "describe", id, "--output", "json"]);
    expect(JSON.parse(json.stdout)).toEqual(fromYaml);

    const table = await shoal(["job", "describe", id, "--output", "table"]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toContain(`ID            = ${id}`);
    expect(table.stdout).toContain("State         = Completed");
    expect(table.stdout).toContain("Summary\nCompleted = 1");
    expect(table.stdout).toMatch(/Job History\nTIME +BY +TOPIC +EVENT\n.* +operator:ops +Submission +Job submitted\n/);
    expect(table.stdout).toMatch(
      new RegExp(
        `Executions\\nID +NODE ID +STATE +DESIRED +REV\\. +CREATED +MODIFIED +COMMENT\\ne-[0-9a-f]{8} +${nodeId} +Completed +Stopped`,
      ),
    );
    expect(table.stdout).toMatch(/Execution e-[0-9a-f]{8} History\n/);
    expect(table.stdout.trimEnd().endsWith("Standard Output\ndescribed")).toBe(true);
  });

  it("executions: Bacalhau's columns; JSON and YAML the executions", async () => {
    const table = await shoal(["job", "executions", id]);
    expect(table.code, table.stderr).toBe(0);
    const [header, row] = table.stdout.trimEnd().split("\n");
    expect(header?.split(/ {2,}/)).toEqual([
      "CREATED",
      "MODIFIED",
      "ID",
      "JOB VERSION",
      "NODE ID",
      "REV.",
      "STATE",
      "DESIRED",
    ]);
    expect(row?.split(/ {2,}/).slice(2)).toEqual([
      expect.stringMatching(/^e-[0-9a-f]{8}$/),
      "1",
      nodeId,
      expect.stringMatching(/^\d+$/),
      "Completed",
      "Stopped",
    ]);
    for (const format of ["json", "yaml"] as const) {
      const res = await shoal(["job", "executions", id, "--output", format]);
      const items = (format === "json" ? JSON.parse(res.stdout) : parseYaml(res.stdout)) as Body[];
      expect(items.map((e) => [e.JobID, e.NodeID, e.ComputeState.StateType])).toEqual([[id, nodeId, 9]]);
    }
  });

  it("history: every entry in a table; --event-type and --execution-id filter; JSON and YAML the entries", async () => {
    const table = await shoal(["job", "history", id]);
    expect(table.code, table.stderr).toBe(0);
    const [header, ...rows] = table.stdout.trimEnd().split("\n");
    expect(header?.split(/ {2,}/)).toEqual(["TIME", "LEVEL", "JOB VERSION", "EXEC. ID", "BY", "TOPIC", "EVENT"]);
    expect(rows[0]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d +JobLevel +1 +operator:ops +Submission +Job submitted$/);
    expect(rows.at(-1)).toMatch(/JobLevel +1 +workflow:jobs +State Update +Completed$/);
    expect(rows.some((r) => r.includes(`node:${nodeId}`))).toBe(true);
    const all = JSON.parse((await shoal(["job", "history", id, "--output", "json"])).stdout) as Body[];
    expect(all).toHaveLength(rows.length);
    const csv = csvRows((await shoal(["job", "history", id, "-o", "csv"])).stdout);
    expect(csv[0]).toEqual(["TIME", "LEVEL", "JOB VERSION", "EXEC. ID", "BY", "TOPIC", "EVENT"]);
    expect(csv.slice(1).map((r) => [r[0], r[3]])).toEqual(
      all.map((h) => [new Date(h.Time).toISOString(), h.ExecutionID ?? ""]),
    );
    // JSON carries who acted in each entry's Event.Details, as the table's BY shows it.
    expect(all[0]!.Event.Details.Actor).toBe("operator:ops");
    const jobOnly = parseYaml(
      (await shoal(["job", "history", id, "--event-type", "job", "--output", "yaml"])).stdout,
    ) as Body[];
    expect(jobOnly.map((h) => h.JobState.New)).toEqual(["Pending", "Running", "Completed"]);
    const executionId = all.find((h) => h.ExecutionID)?.ExecutionID as string;
    const own = JSON.parse(
      (await shoal(["job", "history", id, "--execution-id", executionId, "--output", "json"])).stdout,
    ) as Body[];
    expect(own.length).toBeGreaterThan(0);
    expect(own.every((h) => h.ExecutionID === executionId)).toBe(true);
    const future = JSON.parse(
      (await shoal(["job", "history", id, "--since", String(Math.floor(Date.now() / 1000) + 3600), "--output", "json"]))
        .stdout,
    );
    expect(future).toEqual([]);
  });

  it("stop: a running job Stopped with the reason; stopping it again, or a Completed job, is an error exit", async () => {
    const started = await shoal(["docker", "run", "--wait=false", "--id-only", ...SMALL, image, "--", "sleep", "30"]);
    expect(started.code, started.stderr).toBe(0);
    const running = started.stdout.trim();
    await waitFor(
      async () => (await get(`/api/v1/orchestrator/jobs/${running}/executions`)).Items[0]?.ComputeState.StateType === 6,
      30_000,
      () => "execution Running",
    );
    const stop = await shoal(["job", "stop", running, "--reason", "enough for now"]);
    expect(stop.code, stop.stderr).toBe(0);
    expect(stop.stdout).toContain("Checking job status");
    expect(stop.stdout).toContain(`Job stop successfully submitted. Job ID: ${running}`);
    expect((await get(`/api/v1/orchestrator/jobs/${running}`)).Job.State).toEqual({
      StateType: "Stopped",
      Message: "enough for now",
    });

    const again = await shoal(["job", "stop", running]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("Error: Job is already in a terminal state.\nThe current state is: Stopped");
    const done = await shoal(["job", "stop", id, "--output", "json"]);
    expect(done.code).toBe(1);
    expect(done.stderr).toContain("The current state is: Completed");
    expect((await get(`/api/v1/orchestrator/jobs/${id}`)).Job.State.StateType).toBe("Completed");
  }, 60_000);

  it("stop --output json and yaml print the API's answer; --quiet prints nothing", async () => {
    for (const format of ["json", "yaml", "quiet"] as const) {
      const started = await shoal([
        "docker",
        "run",
        "--wait=false",
        "--id-only",
        "--queue-timeout",
        "600",
        "--cpu",
        "8",
        image,
        "--",
        "true",
      ]);
      const queued = started.stdout.trim();
      await waitFor(
        async () => (await get(`/api/v1/orchestrator/jobs/${queued}`)).Job.State.StateType === "Queued",
        30_000,
        () => "job Queued",
      );
      const res = await shoal(["job", "stop", queued, ...(format === "quiet" ? ["--quiet"] : ["--output", format])]);
      expect(res.code, res.stderr).toBe(0);
      if (format === "quiet") expect(res.stdout + res.stderr).toBe("");
      else expect(format === "json" ? JSON.parse(res.stdout) : parseYaml(res.stdout)).toEqual({ EvaluationID: "" });
      expect((await get(`/api/v1/orchestrator/jobs/${queued}`)).Job.State).toEqual({
        StateType: "Stopped",
        Message: "Stopped at user request",
      });
    }
  });

  it("an unknown job id: the server's words, exit 1", async () => {
    for (const sub of ["describe", "executions", "history", "stop"]) {
      const res = await shoal(["job", sub, "j-nope"]);
      expect(res.code, sub).toBe(1);
      expect(res.stderr, sub).toContain("Error: job not found: j-nope");
    }
  });
});

describe("bad arguments", () => {
  it("are usage errors: exit 2, the problem named, the command's help pointed at", async () => {
    const cases: [string[], string, string][] = [
      [["job", "list", "--bogus"], "Unknown option '--bogus'", "shoal job list --help"],
      [["job", "list", "--limit", "0"], "--limit must be a whole number from 1 to 10000", "shoal job list --help"],
      [
        ["job", "list", "--order-by", "name"],
        "--order-by must be one of created_at, modified_at, id",
        "shoal job list --help",
      ],
      [
        ["job", "list", "--output", "xml"],
        "--output must be table, wide, json, yaml or csv, got xml",
        "shoal job list --help",
      ],
      [["job", "describe"], "takes exactly one job id", "shoal job describe --help"],
      [
        ["job", "history", "j-1", "--event-type", "node"],
        "--event-type must be one of all, job, execution",
        "shoal job history --help",
      ],
      [
        ["job", "history", "j-1", "--since", "yesterday"],
        "--since must be Unix seconds or an ISO 8601 time",
        "shoal job history --help",
      ],
      [["job", "stop", "a", "b"], "takes exactly one job id", "shoal job stop --help"],
      [["job", "frobnicate"], 'unknown job command "frobnicate"', "shoal job --help"],
      [["docker", "run"], "needs an IMAGE", "shoal docker run --help"],
      [["docker", "run", "--cpu"], "argument missing", "shoal docker run --help"],
      [
        ["docker", "run", "--network", "wifi", "busybox"],
        "--network must be one of default, none, host, full, http, bridge",
        "shoal docker run --help",
      ],
      [["docker", "run", "--timeout", "soon", "busybox"], "--timeout must be whole seconds", "shoal docker run --help"],
      [["docker", "run", "--count", "two", "busybox"], "--count must be a whole number", "shoal docker run --help"],
      [["docker", "run", "--env", "NOVALUE", "busybox"], "--env takes NAME=value", "shoal docker run --help"],
      [
        ["docker", "run", "--constraints", "zone in (a", "busybox"],
        "--constraints: unbalanced '('",
        "shoal docker run --help",
      ],
      [
        ["docker", "run", "--wait-timeout", "0", "busybox"],
        "--wait-timeout must be at least 1 second",
        "shoal docker run --help",
      ],
      [
        ["docker", "run", "-i", "s3://bucket/key", "busybox"],
        '--input "s3://bucket/key": storage "s3://" is not supported: Shoal reads file:// (localDirectory) and ' +
          "http:// or https:// (urlDownload)",
        "shoal docker run --help",
      ],
      [["docker", "run", "-i", "/data", "busybox"], "the source has no scheme", "shoal docker run --help"],
      [
        ["docker", "run", "-i", "file:///data,ro", "busybox"],
        'invalid storage option "ro": must be a key=value pair',
        "shoal docker run --help",
      ],
      [
        ["docker", "run", "-i", "src=file:///data,dst=inputs", "busybox"],
        'the destination "inputs" must be an absolute path',
        "shoal docker run --help",
      ],
      [
        ["docker", "run", "-i", "src=file:///d,opt=rw=maybe", "busybox"],
        'opt=rw takes true or false, got "maybe"',
        "shoal docker run --help",
      ],
      [["docker", "build"], 'unknown docker command "build"', "shoal docker --help"],
      [
        ["docker", "run", "--wait=maybe", "busybox"],
        '--wait takes true or false, got "maybe"',
        "shoal docker run --help",
      ],
      [
        ["docker", "run", "--follow", "--wait=false", "busybox"],
        "--follow prints the output until the job ends",
        "shoal docker run --help",
      ],
    ];
    for (const [args, message, help] of cases) {
      const res = await runShoal(args);
      expect(res.code, args.join(" ")).toBe(2);
      expect(res.stderr, args.join(" ")).toMatch(/^Error: /);
      expect(res.stderr, args.join(" ")).toContain(message);
      expect(res.stderr, args.join(" ")).toContain(`Run '${help}' for usage.`);
    }
    // --count is the server's to judge (JobLimits.MaxCount, here its default 1000), not a bound of the CLI's own.
    const many = await shoal(["docker", "run", "--wait=false", "--count", "20000", ...SMALL, image, "--", "true"]);
    expect(many.code).toBe(1);
    expect(many.stderr).toContain("job count 20000 is more than the limit of 1000 (JobLimits.MaxCount)");
  }, 60_000);

  it("`shoal job --help` lists the job commands wired, and `shoal --help` lists job and docker", async () => {
    const help = await runShoal(["job", "--help"]);
    expect(help.code).toBe(0);
    const listed = /\nCommands:\n((?: {2}.*\n)+)/.exec(help.stdout)?.[1] ?? "";
    const commands = listed.split("\n").flatMap((l) => /^ {2}(\w+)/.exec(l)?.[1] ?? []);
    expect(commands).toEqual(expect.arrayContaining(["run", "list", "describe", "executions", "history", "stop"]));
    // Every command the help names is there to run: its own module parses the options and refuses a wrong one.
    for (const command of commands) {
      const own = await runShoal(["job", command, "--no-such-option"]);
      expect(own.code, command).toBe(2);
      expect(own.stderr, command).toContain(`Run 'shoal job ${command} --help' for usage.`);
    }
    const top = await runShoal(["--help"]);
    expect(top.stdout).toMatch(/^ {2}job +/m);
    expect(top.stdout).toMatch(/^ {2}docker +/m);
  });
});
