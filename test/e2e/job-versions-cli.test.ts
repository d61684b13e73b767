import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify as yaml } from "yaml";
import type { AuthUser } from "../../src/config/auth-users.ts";
import { startDockerNodeOrchestrator, type DockerNodeOrchestrator } from "../support/docker-node-orchestrator.ts";
import { dockerTestImage } from "../support/docker-test-image.ts";
import { tempDir } from "../support/fixtures.ts";
import { JobApiClient, type Body } from "../support/job-api-client.ts";
import { until } from "../support/job-waits.ts";
import { shellJob } from "../support/shell-job.ts";
import { runShoal } from "../support/shoal-process.ts";

/**
 * The job commands of Bacalhau >= 1.8's job versions, as a user runs them (every call a `bin/shoal` process) against
 * an orchestrator whose node runs the jobs in Docker: `job run --dry-run`, `job versions`, `job describe --version`,
 * `job logs --version`, `job executions` and `job history` with --version / --all-versions, `job rerun`, and
 * `job validate` with no server at all.
 */
const KEY = "versions-cli-key-0123456789abcdefgh";
const USERS: AuthUser[] = [{ Alias: "ops", APIKey: KEY, Capabilities: [{ Actions: ["read:job", "write:job"] }] }];
const nodeId = `jv-${randomUUID().slice(0, 8)}`;
const dir = tempDir("shoal-jv-cli-");
let image = "";
let cluster: DockerNodeOrchestrator | undefined;
const jobs = new JobApiClient(
  () => cluster!.orchestrator.apiUrl,
  () => KEY,
);

/** `shoal job <command> <API flags> …`, with `env` beside the test's own. */
const shoal = (args: string[], env: Record<string, string> = {}) => {
  const { hostname, port } = new URL(cluster!.orchestrator.apiUrl);
  const api = ["--api-host", hostname, "--api-port", port, "--api-key", KEY];
  return runShoal(["job", args[0]!, ...api, ...args.slice(1)], env);
};
/** A job file: the job `sh -c command`, named `name` unless that is undefined. */
function jobFile(file: string, command: string, name: string | undefined): string {
  const path = join(dir, file);
  writeFileSync(path, yaml({ ...shellJob(image, command), ...(name === undefined ? {} : { Name: name }) }));
  return path;
}

beforeAll(async () => {
  image = await dockerTestImage();
  cluster = await startDockerNodeOrchestrator("shoal-jv-cli-", USERS, nodeId);
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
});

describe("a named job's versions from the CLI", () => {
  it("run --dry-run shows the change and submits nothing; versions, describe and logs read a version", async () => {
    const first = await shoal(["run", jobFile("v1.yaml", "echo one", "cli-versions")]);
    expect(first.code, first.stderr).toBe(0);
    const jobId = /Job ID: (j-[0-9a-f-]{36})/.exec(first.stdout)?.[1] as string;
    expect(jobId, first.stdout).toBeDefined();
    expect(first.stdout).toContain(`Job successfully submitted. Job ID: ${jobId}\n`);

    const v2 = jobFile("v2.yaml", "echo two", "cli-versions");
    const dry = await shoal(["run", v2, "--dry-run"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toBe(
      '- Tasks[0].Engine.Params.Parameters[0]: "echo one"\n+ Tasks[0].Engine.Params.Parameters[0]: "echo two"\n',
    );
    expect((await jobs.job(jobId)).Job.Version).toBe(1);
    const same = await shoal(["run", jobFile("v1-again.yaml", "echo one", "cli-versions"), "--dry-run"]);
    expect(same.code, same.stderr).toBe(0);
    expect(same.stdout).toBe("");
    expect(same.stderr).toContain("Warning: No diff detected.");

    const none = join(dir, "none.yaml");
    writeFileSync(none, yaml({ ...shellJob(image, "echo none"), Name: "cli-versions", Count: 0 }));
    const refused = await shoal(["run", none]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      "Count: an update of a batch job must run at least 1 replica (to stop its executions, stop the job)",
    );
    expect((await jobs.job(jobId)).Job.Version).toBe(1);

    const second = await shoal(["run", v2]);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain(`Job successfully submitted. Job ID: ${jobId}, Job Version: 2`);

    const table = await shoal(["versions", "cli-versions"]);
    expect(table.code, table.stderr).toBe(0);
    const lines = table.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^CREATED AT\s+JOB VERSION$/);
    expect(lines.slice(1).map((l) => l.trim().split(/\s+/).at(-1))).toEqual(["1", "2"]);
    const listed = await shoal(["versions", jobId, "-o", "json"]);
    expect(listed.code, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as Body[]).map((j) => [j.Version, j.State.StateType])).toEqual([
      [1, "Completed"],
      [2, "Completed"],
    ]);

    const described = await shoal(["describe", "cli-versions", "--version", "1", "-o", "json"]);
    expect(described.code, described.stderr).toBe(0);
    const at1 = JSON.parse(described.stdout) as Body;
    expect(at1.Job.Version).toBe(1);
    expect(at1.Job.Tasks[0].Engine.Params.Parameters).toEqual(["echo one"]);
    expect(at1.Executions.Items.map((e: Body) => e.RunOutput.Stdout)).toEqual(["one\n"]);

    expect((await shoal(["logs", jobId])).stdout).toBe("two\n");
    expect((await shoal(["logs", jobId, "-v", "1"])).stdout).toBe("one\n");
    const absent = await shoal(["describe", jobId, "--version", "7"]);
    expect(absent.code).toBe(1);
    expect(absent.stderr).toContain(`job version 7 not found for job ${jobId}`);

    /** The job versions of the entries `job <command> cli-versions … -o json` lists. */
    const versionsListed = async (command: string, ...flags: string[]) => {
      const listed = await shoal([command, "cli-versions", ...flags, "-o", "json"]);
      expect(listed.code, listed.stderr).toBe(0);
      return [...new Set((JSON.parse(listed.stdout) as Body[]).map((e) => e.JobVersion))].sort((a, b) => a - b);
    };
    for (const command of ["executions", "history"]) {
      expect(await versionsListed(command)).toEqual([2]);
      expect(await versionsListed(command, "--version", "1")).toEqual([1]);
      expect(await versionsListed(command, "-v", "2")).toEqual([2]);
      expect(await versionsListed(command, "--all-versions")).toEqual([1, 2]);
      expect(await versionsListed(command, "--all-versions", "--version", "1")).toEqual([1]);
      expect(await versionsListed(command, "--all-versions", "--version", "0")).toEqual([1, 2]);
      const bad = await shoal([command, jobId, "--version", "two"]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('--version must be a whole number from 0 to 999999999999, got "two"');
      const gone = await shoal([command, jobId, "--version", "7"]);
      expect(gone.code).toBe(1);
      expect(gone.stderr).toContain(`job version 7 not found for job ${jobId}`);
    }
    const paged = await shoal(["executions", jobId, "--all-versions", "--limit", "1"]);
    expect(paged.code, paged.stderr).toBe(0);
    expect(paged.stdout).toMatch(new RegExp(`shoal job executions ${jobId} --all-versions .*--limit 1 --next-token `));
  }, 120_000);

  it("rerun runs a version again as the next one and waits for it; refusals say why", async () => {
    const first = await shoal(["run", jobFile("r1.yaml", "echo first", "cli-rerun")]);
    expect(first.code, first.stderr).toBe(0);
    const jobId = /Job ID: (j-[0-9a-f-]{36})/.exec(first.stdout)?.[1] as string;
    expect((await shoal(["run", jobFile("r2.yaml", "echo second", "cli-rerun")])).code).toBe(0);

    const rerun = await shoal(["rerun", "cli-rerun", "--version", "1", "--reason", "compare"]);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.stdout).toContain(`Job successfully rerun. Job ID: ${jobId}, Job Version: 3`);
    expect(rerun.stdout).toContain(`Job ${jobId} Completed.`);
    expect((await shoal(["logs", jobId])).stdout).toBe("first\n");
    const history = await jobs.call("GET", `/api/v1/orchestrator/jobs/${jobId}/history?event_type=job`);
    expect(history.body.Items[0].Event).toMatchObject({
      Message: "Job rerun requested",
      Details: { Reason: "compare" },
    });

    const quick = await shoal(["rerun", jobId, "--wait=false", "--id-only"]);
    expect(quick.code, quick.stderr).toBe(0);
    expect(quick.stdout).toBe(`${jobId}\n`);
    await until(jobs, jobId, (j) => j.Job.Version === 4, "version 4");

    const missing = await shoal(["rerun", jobId, "--version", "9"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`job version 9 not found for job ${jobId}`);
    const bad = await shoal(["rerun", jobId, "--version", "latest"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--version must be a whole number from 0 to 999999999999, got "latest"');
    expect((await shoal(["rerun"])).code).toBe(2);
  }, 120_000);

  it("logs, executions, history and stop find a named job in --namespace; a bad --tail points to logs' help", async () => {
    const path = join(dir, "team.yaml");
    writeFileSync(path, yaml({ ...shellJob(image, "echo team; sleep 600"), Name: "cli-team", Namespace: "team" }));
    const run = await shoal(["run", path, "--wait=false", "--id-only"]);
    expect(run.code, run.stderr).toBe(0);
    const jobId = run.stdout.trim();
    await until(jobs, jobId, (j) => j.Job.State.StateType === "Running", "Running");

    for (const command of ["logs", "executions", "history", "stop"]) {
      const elsewhere = await shoal([command, "cli-team"]);
      expect(elsewhere.code, command).toBe(1);
      expect(elsewhere.stderr).toContain(
        "job not found: cli-team (no job has this ID, ID prefix, or name in namespace",
      );
    }
    const listed = async (command: string) => {
      const res = await shoal([command, "cli-team", "--namespace", "team", "-o", "json"]);
      expect(res.code, res.stderr).toBe(0);
      return JSON.parse(res.stdout) as Body[];
    };
    expect((await listed("executions")).map((e) => e.JobID)).toEqual([jobId]);
    expect((await listed("history")).length).toBeGreaterThan(0);
    // The running container's output reaches its node a moment after it is written.
    let logs = await shoal(["logs", "cli-team", "--namespace", "team"]);
    for (let i = 0; i < 40 && logs.code === 0 && logs.stdout === ""; i++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      logs = await shoal(["logs", "cli-team", "--namespace", "team"]);
    }
    expect(logs.code, logs.stderr).toBe(0);
    expect(logs.stdout).toBe("team\n");
    const tail = await shoal(["logs", "cli-team", "--tail", "x"]);
    expect(tail.code).toBe(2);
    expect(tail.stderr).toContain("--tail must be a number of lines, got x");
    expect(tail.stderr).toContain("shoal job logs --help");
    const stop = await shoal(["stop", "cli-team", "--namespace", "team"]);
    expect(stop.code, stop.stderr).toBe(0);
    expect(stop.stdout).toContain(`Job stop successfully submitted. Job ID: ${jobId}`);
    expect((await jobs.job(jobId)).Job.State.StateType).toBe("Stopped");
  }, 120_000);

  it("run --dry-run of an unnamed or unknown job prints it after the error; an invalid one is refused", async () => {
    const unnamed = await shoal(["run", jobFile("unnamed.yaml", "echo hi", undefined), "--dry-run"]);
    expect(unnamed.code, unnamed.stderr).toBe(0);
    expect(unnamed.stderr).toContain("Error: failed to fetch Job spec: invalid job spec: name is missing");
    expect(unnamed.stderr).toContain("Warning: falling back to offline mode...");
    expect(unnamed.stdout).toContain("Parameters:\n");
    const fresh = await shoal(["run", jobFile("fresh.yaml", "echo hi", "never-submitted"), "--dry-run"]);
    expect(fresh.code, fresh.stderr).toBe(0);
    expect(fresh.stderr).toContain("job not found: never-submitted");
    expect(fresh.stdout).toContain("Name: never-submitted");

    const path = join(dir, "invalid.yaml");
    writeFileSync(
      path,
      yaml({ Name: "cli-versions", Type: "batch", Tasks: [{ Name: "t", Engine: { Type: "docker" } }] }),
    );
    const invalid = await shoal(["run", path, "--dry-run"]);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain("Error: the job provided is invalid");
    expect(invalid.stderr).toContain("Image");
    const listed = await jobs.call("GET", "/api/v1/orchestrator/jobs?limit=100");
    expect(listed.body.Items.map((j: Body) => j.Name)).not.toContain("never-submitted");
  }, 60_000);
});

describe("shoal job validate", () => {
  it("checks a file with no server: OK (0) or every problem (1); an unreadable file is a usage error", async () => {
    const good = await runShoal(["job", "validate", jobFile("good.yaml", "echo ok", "valid")]);
    expect(good.code, good.stderr).toBe(0);
    expect(good.stdout).toBe("OK\n");

    const path = join(dir, "bad.yaml");
    writeFileSync(path, yaml({ Type: "batch", Count: 0, Tasks: [{ Name: "t", Engine: { Type: "docker" } }] }));
    const bad = await runShoal(["job", "validate", path]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^Error: the job provided is invalid \(\d+ problems?\):\n/);
    expect(bad.stderr).toContain("Image");
    expect(bad.stdout).toBe("");

    const broken = join(dir, "broken.yaml");
    writeFileSync(broken, "Type: batch\nTasks: [\n");
    const notYaml = await runShoal(["job", "validate", broken]);
    expect(notYaml.code).toBe(1);
    expect(notYaml.stderr).toContain("is not valid YAML or JSON");

    const twice = join(dir, "twice.yaml");
    writeFileSync(twice, yaml({ ...shellJob(image, "echo ok"), type: "ops" }));
    const both = await runShoal(["job", "validate", twice]);
    expect(both.code).toBe(1);
    expect(both.stderr).toBe(
      'Error: the job provided is invalid: both "Type" and "type" are given at the top: field names match ' +
        "ignoring case, as Go's decoder matches them, so both would be Type; give it once\n",
    );

    const gone = await runShoal(["job", "validate", join(dir, "missing.yaml")]);
    expect(gone.code).toBe(2);
    expect(gone.stderr).toContain("cannot read the job from");
    expect((await runShoal(["job", "validate"])).code).toBe(2);
  }, 30_000);
});

describe("shoal job run -V/--template-vars and -E/--template-envs", () => {
  it("renders the file with the values given and the environment picked; a missing one is refused", async () => {
    const path = join(dir, "template.yaml");
    const job = shellJob("{{ .image }}", "echo {{.greeting}} {{ .TPL_WHO }}; echo '{{`{{.literal}}`}}'");
    writeFileSync(path, yaml({ ...job, Name: "{{.name}}" }));
    const ran = await shoal(
      ["run", path, "-V", `name=templated,image=${image}`, "--template-vars", "greeting=hello", "-E", "^TPL_"],
      { TPL_WHO: "from-env", OTHER_WHO: "never" },
    );
    expect(ran.code, ran.stderr).toBe(0);
    const jobId = /Job ID: (j-[0-9a-f-]{36})/.exec(ran.stdout)?.[1] as string;
    const got = await jobs.job(jobId);
    expect(got.Job.Name).toBe("templated");
    expect(got.Executions.Items[0].RunOutput.Stdout).toBe("hello from-env\n{{.literal}}\n");

    const missing = await shoal(["run", path, "-V", `name=templated,image=${image}`]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(
      /the job provided is invalid: failed to execute template: line \d+: map has no entry for key "greeting"/,
    );
    expect((await jobs.job(jobId)).Job.Version).toBe(1);
    const badPair = await shoal(["run", path, "-V", "name"]);
    expect(badPair.code).toBe(2);
    expect(badPair.stderr).toContain("name must be formatted as key=value");

    const plain = join(dir, "plain.yaml");
    writeFileSync(plain, yaml({ ...shellJob(image, "echo '{{.as_written}}'"), Name: "not-templated" }));
    const untouched = await shoal(["run", plain, "--no-template"]);
    expect(untouched.code, untouched.stderr).toBe(0);
    expect((await shoal(["logs", "not-templated"])).stdout).toBe("{{.as_written}}\n");
  }, 120_000);
});
