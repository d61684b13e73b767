import { describe, expect, it } from "vitest";
import { BACALHAU_JOB_DEFAULTS } from "../../../../machines/job/job-defaults.ts";
import { DEFAULT_JOB_LIMITS, WIRE_LIMITS, jobLimitsProblems } from "../../../../machines/job/job-limits.ts";
import { problemText, validateJobSubmission } from "../../../../src/actors/job-submission/validate-job-submission.ts";
import { validateWorkMessage } from "../../../../src/transport/decode-work.ts";
import { workTaskOf } from "../../../../src/workflows/jobs/work-task-of.ts";
import type { ExecutionState } from "../../../../machines/execution/execution-state.ts";

const ID = "j-00000000-0000-4000-8000-000000000001";
const opts = { jobId: ID, defaults: BACALHAU_JOB_DEFAULTS };
const task = (extra: Record<string, unknown> = {}, params: Record<string, unknown> = {}) => ({
  Name: "main",
  Engine: { Type: "docker", Params: { Image: "busybox:1.36", ...params } },
  ...extra,
});
const job = (extra: Record<string, unknown> = {}, t: Record<string, unknown> = task()) => ({
  Type: "batch",
  Tasks: [t],
  ...extra,
});

function problems(input: unknown): string[] {
  const result = validateJobSubmission(input, opts);
  if (result.ok) throw new Error("expected the job to be refused");
  return result.problems.map(problemText);
}

const many = <T>(n: number, make: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => make(i));
const x = (n: number) => "x".repeat(n);

describe("job limits: every odd spec is refused, naming the field", () => {
  it.each([
    [
      "Count 1e9",
      job({ Count: 1_000_000_000 }),
      "Count: job count 1000000000 is more than the limit of 1000 (JobLimits.MaxCount)",
    ],
    [
      "Count 1001 (service)",
      job({ Type: "service", Count: 1001 }),
      "Count: job count 1001 is more than the limit of 1000 (JobLimits.MaxCount)",
    ],
    [
      "300 tasks",
      { Type: "batch", Tasks: many(300, (i) => task({ Name: `t${i}` })) },
      "Tasks: Shoal runs one task per job; this one has 300",
    ],
    [
      "a 9,000-character env value",
      job({}, task({ Env: { BIG: x(9000) } })),
      'Tasks[0].Env.BIG: the value of "BIG" is 9000 characters; the limit is 4096',
    ],
    [
      "a 20 KB env value",
      job({}, task({ Env: { BIG: x(20_000) } })),
      'Tasks[0].Env.BIG: the value of "BIG" is 20000 characters',
    ],
    [
      "300 env entries",
      job({}, task({ Env: Object.fromEntries(many(300, (i) => [`V${i}`, "1"])) })),
      "Tasks[0].Env: 300 environment variables; the limit is 64",
    ],
    [
      "300 EnvironmentVariables",
      job({}, task({}, { EnvironmentVariables: many(300, (i) => `V${i}=1`) })),
      "Tasks[0].Engine.Params.EnvironmentVariables: 300 items; the limit is 64",
    ],
    [
      "a 9,000-character EnvironmentVariables item",
      job({}, task({}, { EnvironmentVariables: [`A=${x(9000)}`] })),
      "Tasks[0].Engine.Params.EnvironmentVariables[0]: the item is 9002 characters",
    ],
    [
      "a 9,000-character parameter",
      job({}, task({}, { Parameters: ["-c", x(9000)] })),
      "Tasks[0].Engine.Params.Parameters[1]: the item is 9000 characters; the limit is 4096 (JobLimits.MaxArgument",
    ],
    [
      "300 entrypoint items",
      job({}, task({}, { Entrypoint: many(300, () => "a") })),
      "Tasks[0].Engine.Params.Entrypoint: 300 items; the limit is 64 (JobLimits.MaxEntrypointItems)",
    ],
    [
      "2,000 parameters",
      job({}, task({}, { Parameters: many(2000, () => "a") })),
      "Tasks[0].Engine.Params.Parameters: 2000 items; the limit is 256 (JobLimits.MaxParameters)",
    ],
    [
      "a 600-character image",
      job({}, task({}, { Image: `busybox${x(593)}` })),
      "Tasks[0].Engine.Params.Image: the image reference is 600 characters; the limit is 512 (JobLimits.MaxImage",
    ],
    [
      "an image with a space",
      job({}, task({}, { Image: "busy box" })),
      'Tasks[0].Engine.Params.Image: image "busy box" cannot contain white space',
    ],
    [
      "a 2,000-character working directory",
      job({}, task({}, { WorkingDirectory: `/${x(1999)}` })),
      "Tasks[0].Engine.Params.WorkingDirectory: the working directory is 2000 characters; the limit is 1024",
    ],
    [
      "'..' in WorkingDirectory",
      job({}, task({}, { WorkingDirectory: "/app/../etc" })),
      'Tasks[0].Engine.Params.WorkingDirectory: "/app/../etc" cannot contain a ".." segment',
    ],
    ["'..' in Name", job({ Name: "../x" }), 'Name: job name "../x" cannot contain "/"'],
    ["'..' alone in Name", job({ Name: "a..b" }), 'Name: job name "a..b" cannot contain ".."'],
    [
      "a control character in Name",
      job({ Name: "a\u0007b" }),
      'Name: job name "a\\u0007b" cannot contain control characters',
    ],
    ["a newline in Name", job({ Name: "a\nb" }), 'Name: job name "a\\nb" cannot contain control characters'],
    [
      "a 300-character Name",
      job({ Name: x(300) }),
      "Name: job name is 300 characters; the limit is 255 (JobLimits.MaxNameLength)",
    ],
    ["'..' in Namespace", job({ Namespace: ".." }), 'Namespace: namespace ".." must be 1 to 63 letters'],
    ["'/' in Namespace", job({ Namespace: "team/a" }), 'Namespace: namespace "team/a" must be'],
    ["'..' in task Name", job({}, task({ Name: "a/../b" })), 'Tasks[0].Name: task name "a/../b" cannot contain "/"'],
    ["'..' alone in task Name", job({}, task({ Name: ".." })), 'Tasks[0].Name: task name ".." cannot contain ".."'],
    [
      "CPU 0",
      job({}, task({ Resources: { CPU: "0" } })),
      'Tasks[0].Resources.CPU: CPU "0" must be at least 1m (one millicore)',
    ],
    ["CPU 0m", job({}, task({ Resources: { CPU: "0m" } })), 'Tasks[0].Resources.CPU: CPU "0m" must be at least 1m'],
    [
      "Memory 0",
      job({}, task({ Resources: { Memory: "0" } })),
      'Tasks[0].Resources.Memory: memory "0" is less than the minimum: the limit is 6Mi (JobLimits.MinMemory)',
    ],
    [
      "Memory 1b",
      job({}, task({ Resources: { Memory: "1b" } })),
      'Tasks[0].Resources.Memory: memory "1b" is less than the minimum',
    ],
    [
      "CPU no node has",
      job({}, task({ Resources: { CPU: "100000" } })),
      'Tasks[0].Resources.CPU: CPU "100000" is more than any node offers: the limit is 4096 cores (JobLimits.MaxCPU)',
    ],
    [
      "Memory no node has",
      job({}, task({ Resources: { Memory: "1Pi" } })),
      'Tasks[0].Resources.Memory: memory "1pi" is more than any node offers: the limit is 64Ti (JobLimits.MaxMemory)',
    ],
    [
      "GPU no node has",
      job({}, task({ Resources: { GPU: "1000" } })),
      "Tasks[0].Resources.GPU: 1000 GPUs is more than any node offers: the limit is 64 (JobLimits.MaxGPU)",
    ],
    [
      "a non-ASCII env name",
      job({}, task({ Env: { ÄPFEL: "1" } })),
      'Tasks[0].Env.ÄPFEL: environment variable "ÄPFEL" must start with a letter',
    ],
    [
      "a 200-character env name",
      job({}, task({ Env: { [`A${"B".repeat(199)}`]: "1" } })),
      "the name is 200 characters; the limit is 128",
    ],
  ] as [string, unknown, string][])("%s", (_name, input, expected) => {
    const found = problems(input);
    expect(
      found.some((p) => p.includes(expected)),
      `${expected}\nin ${JSON.stringify(found)}`,
    ).toBe(true);
  });

  it.each([
    ["Privileged", true],
    ["Binds", ["/:/host"]],
    ["Mounts", [{ Type: "bind", Source: "/", Target: "/host" }]],
    ["Devices", [{ PathOnHost: "/dev/sda" }]],
    ["CapAdd", ["SYS_ADMIN"]],
    ["User", "root"],
    ["PidMode", "host"],
    ["IpcMode", "host"],
    ["NetworkMode", "host"],
    ["UTSMode", "host"],
    ["UsernsMode", "host"],
    ["SecurityOpt", ["seccomp=unconfined"]],
    ["privileged", true],
  ])("refuses the docker param %s, naming it", (key, value) => {
    expect(problems(job({}, task({}, { [key]: value })))).toEqual([
      `Tasks[0].Engine.Params.${key}: docker engine param "${key}" is not supported: Shoal nodes apply only ` +
        "Image, Entrypoint, Parameters, EnvironmentVariables, WorkingDirectory",
    ]);
  });

  it("takes limits it is given (config), and names their keys", () => {
    const limits = { ...DEFAULT_JOB_LIMITS, MaxCount: 5, MaxParameters: 2 };
    const input = job({ Count: 6 }, task({}, { Parameters: ["a", "b", "c"] }));
    const result = validateJobSubmission(input, { ...opts, limits });
    expect(result.ok ? [] : result.problems.map(problemText)).toEqual([
      "Count: job count 6 is more than the limit of 5 (JobLimits.MaxCount)",
      "Tasks[0].Engine.Params.Parameters: 3 items; the limit is 2 (JobLimits.MaxParameters)",
    ]);
  });

  const L = DEFAULT_JOB_LIMITS;
  it.each([
    [
      "Name and task Name",
      job({ Name: x(L.MaxNameLength), Namespace: `a${x(62)}` }, task({ Name: x(L.MaxNameLength) })),
    ],
    ["Count", job({ Count: L.MaxCount })],
    ["Env entries", job({}, task({ Env: Object.fromEntries(many(L.MaxEnvironmentVariables, (i) => [`V${i}`, "v"])) }))],
    ["an Env value", job({}, task({ Env: { V: x(L.MaxEnvValueLength) } }))],
    [
      "EnvironmentVariables",
      job({}, task({}, { EnvironmentVariables: many(L.MaxEnvironmentVariables, (i) => `V${i}=v`) })),
    ],
    ["an EnvironmentVariables item", job({}, task({}, { EnvironmentVariables: [`A=${x(L.MaxEnvValueLength - 2)}`] }))],
    [
      "Entrypoint and Parameters",
      job(
        {},
        task({}, { Entrypoint: many(L.MaxEntrypointItems, () => "e"), Parameters: many(L.MaxParameters, () => "p") }),
      ),
    ],
    ["an argument", job({}, task({}, { Entrypoint: [x(L.MaxArgumentLength)], Parameters: [x(L.MaxArgumentLength)] }))],
    ["Image", job({}, task({}, { Image: x(L.MaxImageLength) }))],
    ["WorkingDirectory", job({}, task({}, { WorkingDirectory: `/${x(L.MaxWorkingDirectoryLength - 1)}` }))],
    ["the least resources", job({}, task({ Resources: { CPU: "1m", Memory: "6Mi" } }))],
    [
      "InputSources",
      job(
        {},
        task({
          InputSources: [
            ...many(31, (i) => ({
              Source: { Type: "urlDownload", Params: { URL: `http://h/${i}.txt` } },
              Target: `/${i}`,
            })),
            { Source: { Type: "localDirectory", Params: { SourcePath: `/${x(1023)}` } }, Target: `/${x(1023)}` },
          ],
        }),
      ),
    ],
    [
      "an input's URL",
      job(
        {},
        task({
          InputSources: [{ Source: { Type: "urlDownload", Params: { URL: `http://h/${x(2039)}` } }, Target: "/i" }],
        }),
      ),
    ],
    [
      "the most resources",
      job({}, task({ Resources: { CPU: String(L.MaxCPU), Memory: "64Ti", GPU: String(L.MaxGPU) } })),
    ],
  ] as [string, unknown][])("accepts a job at the limit of %s, and the wire carries its work", (_name, input) => {
    const result = validateJobSubmission(input, opts);
    if (!result.ok) throw new Error(result.problems.map(problemText).join("; "));
    const execution = { executionId: "e-1", jobId: ID, partitionIndex: 0, executionTimeout: 0 } as ExecutionState;
    const Task = workTaskOf(result.spec, execution);
    const work = { MessageID: "m", NodeID: "n-1", ExecutionID: "e-1", JobID: ID, Task };
    expect(() => validateWorkMessage({ Type: "RunExecution", ...work })).not.toThrow();
  });
});

describe("configured limits", () => {
  it("the defaults are sound and within what the wire carries", () => {
    expect(jobLimitsProblems(DEFAULT_JOB_LIMITS)).toEqual([]);
    expect(DEFAULT_JOB_LIMITS.MaxEnvValueLength).toBeLessThanOrEqual(WIRE_LIMITS.textLength);
  });

  it("refuses limits looser than the wire, or not positive, naming each key", () => {
    expect(jobLimitsProblems({ ...DEFAULT_JOB_LIMITS, MaxImageLength: 513, MaxCount: 0, MinMemory: 1 })).toEqual([
      "JobLimits.MaxCount: must be more than 0, got 0",
      "JobLimits.MaxImageLength: 513 is more than Shoal can carry (at most 512)",
      "JobLimits.MinMemory: 1 bytes is less than Docker's minimum of 6MiB",
    ]);
  });
});

/**
 * Job specs from Bacalhau's documentation (docs.bacalhau.org: the job specification, the Docker
 * engine, network, resources, timeouts, constraints and daemon examples), as a user would submit them.
 */
const BACALHAU_DOCS_EXAMPLES: Record<string, unknown> = {
  "the job specification's example": {
    Name: "A Simple Docker Job",
    Type: "batch",
    Count: 1,
    Tasks: [
      {
        Name: "My main task",
        Engine: {
          Type: "docker",
          Params: { Image: "ubuntu:latest", Entrypoint: ["/bin/bash"], Parameters: ["-c", "echo Hello Bacalhau!"] },
        },
      },
    ],
  },
  "the job specification reference's basic structure": {
    Name: "my-job",
    Type: "batch",
    Count: 1,
    Tasks: [
      {
        Name: "main",
        Engine: { Type: "docker", Params: { Image: "ubuntu:latest" } },
        Resources: { CPU: "1", Memory: "1GB" },
      },
    ],
  },
  "the Docker engine's example": {
    Type: "batch",
    Tasks: [
      {
        Name: "main",
        Engine: {
          Type: "Docker",
          Params: {
            Image: "ubuntu:20.04",
            Entrypoint: ["/bin/bash", "-c"],
            Parameters: ["echo Hello, World!"],
            EnvironmentVariables: ["MY_ENV_VAR=myvalue"],
            WorkingDirectory: "/app",
          },
        },
      },
    ],
  },
  "a job with resources, timeouts, env, labels and meta": {
    Name: "my-job",
    Namespace: "default",
    Type: "batch",
    Count: 3,
    Priority: 0,
    Labels: { env: "prod", app: "web" },
    Meta: { owner: "data-team" },
    Constraints: [
      { Key: "Architecture", Operator: "=", Values: ["arm64"] },
      { Key: "region", Operator: "in", Values: ["us-east-1", "us-west-2"] },
    ],
    Tasks: [
      {
        Name: "main",
        Engine: {
          Type: "docker",
          Params: { Image: "python:3.11-slim", Entrypoint: ["python", "-c"], Parameters: ["print('hi')"] },
        },
        Env: { MY_VAR: "value", SECRET_KEY: "env:HOST_SECRET" },
        Resources: { CPU: "0.5", Memory: "256mb", Disk: "1gb", GPU: "1" },
        Network: { Type: "HTTP", Domains: ["example.com", "bacalhau.org"] },
        Timeouts: { ExecutionTimeout: 3600, QueueTimeout: 600, TotalTimeout: 7200 },
        Publisher: { Type: "local" },
        ResultPaths: [{ Name: "outputs", Path: "/outputs" }],
      },
    ],
  },
  "a daemon job (log collection)": {
    Name: "Logging Daemon",
    Type: "daemon",
    Namespace: "logging",
    Constraints: [{ Key: "service", Operator: "==", Values: ["WebService"] }],
    Tasks: [
      {
        Name: "main",
        Engine: {
          Type: "docker",
          Params: {
            Image: "expanso/nginx-access-log-agent:1.0.0",
            Parameters: ["--fluent-bit-config", "/etc/fluent-bit.conf"],
          },
        },
        Resources: { CPU: "250m", Memory: "1GB" },
      },
    ],
  },
  "a service job": {
    Name: "web-server",
    Type: "service",
    Count: 2,
    Tasks: [
      {
        Name: "nginx",
        Engine: { Type: "docker", Params: { Image: "nginx:1.25" } },
        Network: { Type: "Full" },
        Resources: { CPU: "1", Memory: "1Gi" },
      },
    ],
  },
  "an ops job": {
    Name: "update-config",
    Type: "ops",
    Tasks: [
      {
        Name: "main",
        Engine: {
          Type: "docker",
          Params: { Image: "alpine:3.19", Entrypoint: ["sh", "-c"], Parameters: ["echo updating"] },
        },
        Resources: { CPU: "100m", Memory: "64Mb" },
      },
    ],
  },
};

describe("every example job spec of Bacalhau's documentation passes", () => {
  it.each(Object.entries(BACALHAU_DOCS_EXAMPLES))("%s", (_name, example) => {
    const result = validateJobSubmission(example, opts);
    expect(result.ok ? [] : result.problems.map(problemText)).toEqual([]);
    // What is stored passes again: a restart never fails a job the limits accepted.
    if (result.ok) expect(validateJobSubmission(result.spec, opts)).toMatchObject({ ok: true, spec: result.spec });
  });
});
