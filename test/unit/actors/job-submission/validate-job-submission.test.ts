import { describe, expect, it } from "vitest";
import { BACALHAU_JOB_DEFAULTS, type JobDefaults } from "../../../../machines/job/job-defaults.ts";
import { DEFAULT_JOB_LIMITS } from "../../../../machines/job/job-limits.ts";
import {
  MAX_JOB_SPEC_BYTES,
  problemText,
  validateJobSubmission,
} from "../../../../src/actors/job-submission/validate-job-submission.ts";

const ID = "j-00000000-0000-4000-8000-000000000001";
const opts = { jobId: ID, defaults: BACALHAU_JOB_DEFAULTS };
const docker = (params: Record<string, unknown> = { Image: "busybox:1.36" }) => ({ Type: "docker", Params: params });
const job = (extra: Record<string, unknown> = {}, task: Record<string, unknown> = {}) => ({
  Type: "batch",
  Tasks: [{ Name: "main", Engine: docker(), ...task }],
  ...extra,
});

function problems(input: unknown, defaults: JobDefaults = BACALHAU_JOB_DEFAULTS): string[] {
  const result = validateJobSubmission(input, { jobId: ID, defaults });
  if (result.ok) throw new Error("expected the job to be refused");
  return result.problems.map(problemText);
}

function accepted(input: unknown, defaults: JobDefaults = BACALHAU_JOB_DEFAULTS) {
  const result = validateJobSubmission(input, { jobId: ID, defaults });
  if (!result.ok) throw new Error(`expected the job to be accepted: ${result.problems.map(problemText).join("; ")}`);
  return result;
}

describe("a valid job gets Bacalhau's defaults", () => {
  it("fills in name, namespace, count, network, timeouts and the default resources", () => {
    const { spec, warnings } = accepted(job());
    expect(warnings).toEqual([]);
    expect(spec).toEqual({
      Name: ID,
      Namespace: "default",
      Type: "batch",
      Priority: 0,
      Count: 1,
      Constraints: [],
      Labels: {},
      Meta: {},
      Tasks: [
        {
          Name: "main",
          Engine: {
            Type: "docker",
            Params: {
              Image: "busybox:1.36",
              Entrypoint: [],
              Parameters: [],
              EnvironmentVariables: [],
              WorkingDirectory: "",
            },
          },
          Env: {},
          Meta: {},
          Resources: { CPU: "500m", Memory: "512mb" },
          Network: { Type: "Default", Domains: [] },
          Timeouts: { ExecutionTimeout: 0, QueueTimeout: 0, TotalTimeout: 0 },
        },
      ],
    });
  });

  it("keeps what the job sets, normalizing resource strings and network names", () => {
    const { spec } = accepted(
      job(
        {
          Name: "hello",
          Namespace: "team",
          Count: 3,
          Priority: 5,
          Labels: { env: "dev" },
          Meta: { owner: "me" },
          Constraints: [{ Key: "zone", Operator: "in", Values: ["a", "b"] }],
        },
        {
          Resources: { CPU: "2", Memory: "1 GB", GPU: 1 },
          Network: { Type: "none" },
          Timeouts: { ExecutionTimeout: 60, QueueTimeout: 120, TotalTimeout: 600 },
          Env: { MODE: "fast" },
        },
      ),
    );
    expect(spec).toMatchObject({
      Name: "hello",
      Namespace: "team",
      Count: 3,
      Priority: 5,
      Labels: { env: "dev" },
      Meta: { owner: "me" },
    });
    expect(spec.Constraints).toEqual([{ Key: "zone", Operator: "in", Values: ["a", "b"] }]);
    expect(spec.Tasks[0]).toMatchObject({
      Resources: { CPU: "2", Memory: "1gb", GPU: "1" },
      Network: { Type: "None" },
      Timeouts: { ExecutionTimeout: 60, QueueTimeout: 120, TotalTimeout: 600 },
      Env: { MODE: "fast" },
    });
  });

  it("applies the job type's configured defaults (priority, resources, timeouts) only where the job sets none", () => {
    const defaults: JobDefaults = {
      ...BACALHAU_JOB_DEFAULTS,
      Batch: {
        Priority: 7,
        Task: {
          Resources: { CPU: "1", Memory: "1Gi", Disk: "10Gb" },
          Timeouts: { ExecutionTimeout: 300, QueueTimeout: 60, TotalTimeout: 1800 },
        },
      },
    };
    expect(accepted(job(), defaults).spec.Tasks[0]).toMatchObject({
      Resources: { CPU: "1", Memory: "1gi", Disk: "10gb" },
      Timeouts: { ExecutionTimeout: 300, QueueTimeout: 60, TotalTimeout: 1800 },
    });
    expect(accepted(job(), defaults).spec.Priority).toBe(7);
    const own = accepted(
      job({ Priority: 2 }, { Resources: { CPU: "250m" }, Timeouts: { ExecutionTimeout: 10 } }),
      defaults,
    ).spec;
    expect(own.Priority).toBe(2);
    expect(own.Tasks[0]).toMatchObject({
      Resources: { CPU: "250m", Memory: "1gi" },
      Timeouts: { ExecutionTimeout: 10, TotalTimeout: 1800 },
    });
  });

  it("gives long-running jobs no execution or total timeout defaults", () => {
    const defaults: JobDefaults = {
      ...BACALHAU_JOB_DEFAULTS,
      Service: {
        Priority: 0,
        Task: { Resources: {}, Timeouts: { ExecutionTimeout: 300, TotalTimeout: 1800, QueueTimeout: 60 } },
      },
    };
    expect(accepted(job({ Type: "service" }), defaults).spec.Tasks[0]?.Timeouts).toEqual({
      ExecutionTimeout: 0,
      QueueTimeout: 60,
      TotalTimeout: 0,
    });
  });

  it("runs ops and daemon jobs on every matching node: Count 0, whether absent, 0 or 1", () => {
    for (const Type of ["ops", "daemon"]) {
      expect(accepted(job({ Type })).spec.Count).toBe(0);
      expect(accepted(job({ Type, Count: 1 })).spec.Count).toBe(0);
    }
  });

  it("reads field names case-insensitively, as Go's JSON decoder does", () => {
    const { spec } = accepted({
      type: "batch",
      count: 2,
      tasks: [{ name: "main", engine: { type: "Docker", params: { image: "busybox" } } }],
    });
    expect(spec).toMatchObject({
      Type: "batch",
      Count: 2,
      Tasks: [{ Name: "main", Engine: { Type: "docker", Params: { Image: "busybox" } } }],
    });
  });

  it("warns about what it ignores: server-owned fields, reserved meta, publishers, long-running timeouts", () => {
    const { warnings, spec } = accepted({
      ...job({
        ID: "mine",
        State: { StateType: "Running" },
        Revision: 3,
        Version: 2,
        CreateTime: 1,
        ModifyTime: 2,
        Meta: { "bacalhau.org/requester.id": "x", keep: "y" },
      }),
      Tasks: [{ Name: "main", Engine: docker(), Publisher: { Type: "local" } }],
    });
    expect(warnings).toEqual([
      "job state is ignored when submitting a job",
      "job revision is ignored when submitting a job",
      "job version is ignored when submitting a job",
      "job create time is ignored when submitting a job",
      "job modify time is ignored when submitting a job",
      "job ID is ignored when submitting a batch job",
      'job meta key "bacalhau.org/requester.id" is reserved and will be ignored',
    ]);
    expect(spec.Meta).toEqual({ keep: "y" });
    expect(spec.Tasks).toHaveLength(1);
    expect(accepted(job({ Type: "daemon" }, { Timeouts: { TotalTimeout: 60 } })).warnings).toEqual([
      "Tasks[0].Timeouts.TotalTimeout is ignored: daemon jobs run until stopped",
    ]);
  });

  it(
    "ignores, with a warning, a task meta written among the docker params, as Bacalhau's documented " +
      "examples have it",
    () => {
      const params = { Image: "busybox:1.36", Meta: { "Task goal ": "show how" } };
      const { warnings, spec } = accepted(job({}, { Engine: docker(params) }));
      expect(warnings).toEqual(["Tasks[0].Engine.Params.Meta is ignored: a task's meta goes in Tasks[0].Meta"]);
      expect(spec.Tasks[0]?.Engine.Params).not.toHaveProperty("Meta");
      expect(spec.Tasks[0]?.Meta).toEqual({});
      // Docker's own settings stay refused: a node would run the container without them.
      expect(problems(job({}, { Engine: docker({ ...params, Privileged: true }) }))).toEqual([
        expect.stringMatching(
          /^Tasks\[0\]\.Engine\.Params\.Privileged: docker engine param "Privileged" is not supported/,
        ),
      ]);
    },
  );

  it("warns about each field it does not know, at any level, as Go's decoder ignores them unsaid", () => {
    const { warnings, spec } = accepted({
      ...job({ Contraints: [{ Key: "zone", Operator: "=", Values: ["a"] }], type: "batch" }),
      Tasks: [
        {
          Name: "main",
          engine: { ...docker(), Version: 2 },
          Resorces: { CPU: "64" },
          Resources: { CPU: "1", Cores: 2 },
          Network: { Type: "None", Mode: "x" },
          Timeouts: { ExecutionTimeout: 5, Deadline: 1 },
        },
      ],
    });
    expect(warnings).toEqual([
      "unknown field Contraints is ignored",
      "unknown field Tasks[0].Resorces is ignored",
      "unknown field Tasks[0].Engine.Version is ignored",
      "unknown field Tasks[0].Resources.Cores is ignored",
      "unknown field Tasks[0].Network.Mode is ignored",
      "unknown field Tasks[0].Timeouts.Deadline is ignored",
    ]);
    expect(spec.Constraints).toEqual([]);
  });

  it("accepts a network a node runs only when its operator allows it, or never, saying so", () => {
    const warned = (Type: string) => accepted(job({}, { Network: { Type } })).warnings;
    expect(warned("host")).toEqual([
      "Tasks[0].Network.Type: network Host runs only on nodes whose Compute.Docker.AllowedNetworks lists Host (a " +
        "node allows None alone unless its operator says otherwise): every other node declines the job",
    ]);
    expect(warned("Bridge")[0]).toContain(
      "network Bridge runs only on nodes whose Compute.Docker.AllowedNetworks lists Full",
    );
    expect(warned("HTTP")).toEqual([
      "Tasks[0].Network.Type: no node of this build offers network HTTP (Bacalhau's domain-filtering proxy): every " +
        "node declines the job",
    ]);
    expect([...warned("None"), ...warned("Default")]).toEqual([]);
  });
});

describe("an invalid job is refused with every problem named, each with its field path", () => {
  it("names all the problems of one job at once", () => {
    expect(
      problems({
        Type: "batch",
        Count: -1,
        Constraints: [
          { Key: "", Operator: "in", Values: [] },
          { Key: "zone", Operator: "like", Values: ["a"] },
        ],
        Tasks: [
          {
            Name: "",
            Engine: { Type: "docker", Params: { WorkingDirectory: "tmp", EnvironmentVariables: ["BACALHAU_X=1"] } },
            Resources: { CPU: "lots", Memory: "1 parsec", Disk: "-1Gb", GPU: "1.5" },
            Timeouts: { ExecutionTimeout: -5, QueueTimeout: "soon" },
            Env: { lower: "x", "9LIVES": "y", BACALHAU_Y: "z", EMPTY: "" },
            Network: { Type: "Carrier pigeon" },
          },
        ],
      }),
    ).toEqual([
      "Count: job count must be >= 0",
      "Constraints[0].Key: selector key cannot be blank",
      "Constraints[0].Values: selector values cannot be empty for In or NotIn operators",
      'Constraints[1].Operator: unknown operator "like" (one of ! = == in != notin exists gt lt)',
      "Tasks[0].Name: missing task name",
      "Tasks[0].Engine.Params.Image: missing image: 'Image' cannot be empty",
      'Tasks[0].Engine.Params.WorkingDirectory: "tmp" must be an absolute path',
      'Tasks[0].Engine.Params.EnvironmentVariables[0]: environment variable "BACALHAU_X" cannot start with BACALHAU_',
      'Tasks[0].Env.lower: environment variable "lower" must be uppercase',
      'Tasks[0].Env.9LIVES: environment variable "9LIVES" must start with a letter',
      'Tasks[0].Env.BACALHAU_Y: environment variable "BACALHAU_Y" cannot start with BACALHAU_',
      'Tasks[0].Env.EMPTY: environment variable "EMPTY" cannot have empty value',
      'Tasks[0].Resources.CPU: invalid CPU value: "lots" (cores such as 0.5 or 2, or millicores such as 500m)',
      'Tasks[0].Resources.Memory: invalid memory value: "1 parsec" (bytes with a unit such as 512Mb, 1Gb or 1Gi)',
      'Tasks[0].Resources.Disk: invalid disk value: "-1Gb" (bytes with a unit such as 512Mb, 10Gb or 10Gi)',
      'Tasks[0].Resources.GPU: invalid GPU value: "1.5" (a whole number of GPUs such as 1)',
      'Tasks[0].Network.Type: invalid networking type "Carrier pigeon" (one of Default, None, Host, Full, HTTP, Bridge)',
      "Tasks[0].Timeouts.ExecutionTimeout: invalid execution timeout value: -5s",
      "Tasks[0].Timeouts.QueueTimeout: must be a whole number",
    ]);
  });

  it("refuses a missing or unknown type, and missing tasks", () => {
    expect(problems({})).toEqual(["Type: missing job type", "Tasks: missing job tasks"]);
    expect(problems({ Type: "cron", Tasks: [] })).toEqual([
      'Type: invalid job type: "cron" (one of batch, ops, daemon, service)',
      "Tasks: missing job tasks",
    ]);
    expect(problems("batch")).toEqual(["a job must be a map of fields (Bacalhau's models.Job: Type, Tasks, …)"]);
  });

  it("applies Count rules per type", () => {
    expect(problems(job({ Type: "ops", Count: 2 }))).toEqual([
      "Count: ops jobs cannot specify count > 1 as they run on all matching nodes",
    ]);
    expect(problems(job({ Type: "daemon", Count: 3 }))).toEqual([
      "Count: daemon jobs cannot specify count > 1 as they run on all matching nodes",
    ]);
    expect(problems(job({ Count: 0 }))).toEqual(["Count: a new batch job must run at least 1 replica"]);
    expect(problems(job({ Type: "service", Count: 0 }))).toEqual([
      "Count: a new service job must run at least 1 replica",
    ]);
    expect(problems(job({ Count: 1.5 }))).toEqual(["Count: must be a whole number"]);
  });

  it("says a whole number beyond 2^53 - 1 is too large (or too small) and where the limit is", () => {
    // JSON.parse reads 9007199254740993 as 9007199254740992: a whole number, and not the one written.
    const big = JSON.parse('{"Priority": 9007199254740993, "Count": -1e20, "ExecutionTimeout": 99999999999999999999}');
    expect(
      problems(
        job({ Priority: big.Priority, Count: big.Count }, { Timeouts: { ExecutionTimeout: big.ExecutionTimeout } }),
      ),
    ).toEqual([
      "Count: is too small: at least -9007199254740991",
      "Priority: is too large: at most 9007199254740991",
      "Tasks[0].Timeouts.ExecutionTimeout: is too large: at most 9007199254740991",
    ]);
  });

  it("refuses a QueueTimeout larger than the TotalTimeout, the defaults' included", () => {
    expect(problems(job({}, { Timeouts: { QueueTimeout: 3600, TotalTimeout: 1800 } }))).toEqual([
      "Tasks[0].Timeouts: execution timeout 0s and queue timeout 1h0m0s should be less than total timeout 30m0s",
    ]);
    const thirtyMinutes: JobDefaults = {
      ...BACALHAU_JOB_DEFAULTS,
      Batch: { Priority: 0, Task: { Resources: {}, Timeouts: { TotalTimeout: 1800 } } },
    };
    expect(problems(job({}, { Timeouts: { QueueTimeout: 7200 } }), thirtyMinutes)).toEqual([
      "Tasks[0].Timeouts: execution timeout 0s and queue timeout 2h0m0s should be less than total timeout 30m0s",
    ]);
    expect(problems(job({}, { Timeouts: { ExecutionTimeout: 1000, QueueTimeout: 1000, TotalTimeout: 1800 } }))).toEqual(
      ["Tasks[0].Timeouts: execution timeout 16m40s and queue timeout 16m40s should be less than total timeout 30m0s"],
    );
    accepted(job({}, { Timeouts: { QueueTimeout: 600, TotalTimeout: 1800 } }));
  });

  it("names the engine's problems: missing, unsupported, without params", () => {
    expect(problems(job({}, { Engine: undefined }))).toEqual([
      "Tasks[0].Engine: missing engine: a task runs on an engine (Type: docker)",
    ]);
    expect(problems(job({}, { Engine: { Type: "wasm", Params: { Image: "x" } } }))).toEqual([
      'Tasks[0].Engine.Type: engine type "wasm" is not supported: Shoal runs docker',
    ]);
    expect(problems(job({}, { Engine: { Type: "docker" } }))).toEqual([
      "Tasks[0].Engine.Params: missing docker engine params: Image is required",
    ]);
    expect(problems(job({}, { Engine: { Params: { Image: "x" } } }))).toEqual([
      "Tasks[0].Engine.Type: missing spec type",
    ]);
    expect(problems(job({}, { Engine: docker({ Image: "x", Entrypoint: "sh -c", Parameters: ["ok", 3] }) }))).toEqual([
      "Tasks[0].Engine.Params.Entrypoint: must be a list of strings",
      "Tasks[0].Engine.Params.Parameters[1]: must be a string",
    ]);
  });

  it("names wrong shapes and unsupported features", () => {
    expect(
      problems(
        job(
          { Labels: { a: 1 }, Meta: "x", Name: 7, Priority: "high", Constraints: {} },
          {
            InputSources: [{ Source: { Type: "s3" } }],
            Network: { Type: "Host", Ports: [{ Name: "http" }], Domains: ["example.com"] },
          },
        ),
      ),
    ).toEqual([
      "Priority: must be a whole number",
      "Name: must be a string",
      "Labels.a: must be a string",
      "Meta: must be a map of strings",
      "Constraints: must be a list of label selector requirements (Key, Operator, Values)",
      'Tasks[0].InputSources[0].Source.Type: input source type "s3" is not supported: ' +
        "Shoal reads localDirectory, urlDownload",
      "Tasks[0].InputSources[0].Target: input source is missing a target",
      "Tasks[0].Network.Domains: domains can only be set for HTTP network mode",
      "Tasks[0].Network.Ports: port mappings are not supported by Shoal",
    ]);
    expect(problems(job({}, { Network: { Type: "HTTP", Domains: ["example.com", "not a domain"] } }))).toEqual([
      'Tasks[0].Network.Domains[1]: invalid domain "not a domain"',
    ]);
    expect(
      problems(
        job({
          Constraints: [
            { Key: "cpus", Operator: "gt", Values: ["many"] },
            { Key: "gpu", Operator: "exists", Values: ["1"] },
            { Key: "zone", Operator: "=", Values: ["a", "b"] },
          ],
        }),
      ),
    ).toEqual([
      "Constraints[0].Values[0]: the value of a gt requirement must be a whole number",
      "Constraints[1].Values: selector values must be empty for Exists or KeyNotInImap operators",
      "Constraints[2].Values: selector values must have exactly one value for other operators",
    ]);
  });

  it("tells a blank or wrongly typed value from a missing one", () => {
    expect(problems({ Type: "  ", Tasks: [] })).toEqual([
      'Type: invalid job type: "  " (one of batch, ops, daemon, service)',
      "Tasks: missing job tasks",
    ]);
    expect(problems({ Type: [], Tasks: "" })).toEqual([
      "Type: invalid job type: [] (one of batch, ops, daemon, service)",
      "Tasks: must be a list of tasks",
    ]);
    expect(
      problems(job({ Constraints: [{ Key: [], Operator: "  ", Values: [] }] }, { Name: [], Engine: "docker" })),
    ).toEqual([
      "Constraints[0].Key: must be a string",
      'Constraints[0].Operator: unknown operator "  " (one of ! = == in != notin exists gt lt)',
      "Tasks[0].Name: must be a string",
      "Tasks[0].Engine: must be an engine spec (Type, Params)",
    ]);
    expect(problems(job({}, { Name: "  ", Network: { Type: true } }))).toEqual([
      "Tasks[0].Name: missing task name",
      "Tasks[0].Network.Type: invalid networking type true (one of Default, None, Host, Full, HTTP, Bridge)",
    ]);
  });

  it("names an Env's problems in order: their types, how many there are, then each variable's name and value", () => {
    const limits = { ...DEFAULT_JOB_LIMITS, MaxEnvironmentVariables: 2, MaxEnvValueLength: 3 };
    const result = validateJobSubmission(
      job({}, { Env: { lower: "x", ["A".repeat(129)]: "", N: 1, LONG: "abcd", OK: "y" } }),
      { ...opts, limits },
    );
    expect(result.ok ? [] : result.problems.map(problemText)).toEqual([
      "Tasks[0].Env.N: must be a string",
      "Tasks[0].Env: 4 environment variables; the limit is 2 (JobLimits.MaxEnvironmentVariables)",
      'Tasks[0].Env.lower: environment variable "lower" must be uppercase',
      `Tasks[0].Env.${"A".repeat(129)}: the name is 129 characters; the limit is 128`,
      `Tasks[0].Env.${"A".repeat(129)}: environment variable "${"A".repeat(64)}…" cannot have empty value`,
      'Tasks[0].Env.LONG: the value of "LONG" is 4 characters; the limit is 3 (JobLimits.MaxEnvValueLength)',
    ]);
  });

  it("refuses a job too large to store", () => {
    expect(
      problems(job({}, { Engine: docker({ Image: "busybox", Parameters: ["x".repeat(MAX_JOB_SPEC_BYTES)] }) }))[0],
    ).toMatch(/^the job is \d+ bytes as JSON; the limit is 65536$/);
  });

  it("uses the job id it is given as the default name, and nothing else", () => {
    expect(validateJobSubmission(job(), opts)).toMatchObject({ ok: true, spec: { Name: ID } });
  });
});

describe("input sources", () => {
  const local = (SourcePath: unknown, Target: unknown = "/data", extra: Record<string, unknown> = {}) => ({
    Source: { Type: "localDirectory", Params: { SourcePath, ...extra } },
    Target,
  });
  const url = (URL: unknown, Target = "/inputs") => ({ Source: { Type: "urlDownload", Params: { URL } }, Target });
  const inputs = (...list: unknown[]) => job({}, { InputSources: list });
  // Each problem's path, shortened: Tasks[0].InputSources[i] → [i].
  const refused = (input: unknown) => problems(input).map((p) => p.replace("Tasks[0].InputSources", ""));

  it("stores localDirectory and urlDownload inputs in their one form, types matched in any case", () => {
    const { spec } = accepted(
      inputs(
        { Source: { type: " LocalDirectory ", params: { sourcepath: "/srv/data", readwrite: "true" } }, Target: "/d" },
        { ...url("'https://example.com/a/b.csv'"), Alias: " b " },
        local("/srv/ro"),
      ),
    );
    expect(spec.Tasks[0]?.InputSources).toEqual([
      {
        Source: { Type: "localDirectory", Params: { SourcePath: "/srv/data", ReadWrite: true } },
        Alias: "",
        Target: "/d",
      },
      {
        Source: { Type: "urlDownload", Params: { URL: "https://example.com/a/b.csv" } },
        Alias: "b",
        Target: "/inputs",
      },
      {
        Source: { Type: "localDirectory", Params: { SourcePath: "/srv/ro", ReadWrite: false } },
        Alias: "",
        Target: "/data",
      },
    ]);
    expect(accepted(job()).spec.Tasks[0]?.InputSources).toBeUndefined();
  });

  it("refuses other storage types, naming the supported ones", () => {
    expect(refused(inputs({ Source: { Type: "ipfs", Params: { CID: "Qm" } }, Target: "/ipfs" }))).toEqual([
      '[0].Source.Type: input source type "ipfs" is not supported: Shoal reads localDirectory, urlDownload',
    ]);
    expect(refused(inputs({ Target: "/x" }, { Source: {}, Target: "/y" }))).toEqual([
      "[0].Source: invalid input source: nil spec config",
      "[1].Source.Type: invalid input source: missing spec type",
    ]);
  });

  it("wants absolute targets, each once, and aliases each once", () => {
    expect(refused(inputs(local("/a", "data"), local("/b", "/x/../y"), local("/c", "/"), local("/d", "  ")))).toEqual([
      '[0].Target: target "data" must be an absolute path (starting with /)',
      "[1].Target: target \"/x/../y\" must be an absolute path without '.', '..' or empty parts (nor a trailing /)",
      "[2].Target: target cannot be / (the container's root)",
      "[3].Target: input source is missing a target",
    ]);
    expect(
      refused(inputs({ ...local("/a", "/d"), Alias: "x" }, { ...local("/b", "/d"), Alias: "x" }, local("/c", "/e"))),
    ).toEqual([
      "[1].Alias: input source with alias 'x' already exists",
      "[1].Target: input source with target '/d' already exists",
    ]);
  });

  it("checks each type's params: an absolute SourcePath, a boolean ReadWrite, an http(s) URL with a file name", () => {
    expect(
      refused(
        inputs(
          local(undefined, "/a"),
          local("relative/dir", "/b", { ReadWrite: "yes" }),
          local("/srv/new", "/c", { CreateAs: "dir" }),
          url("ftp://example.com/f.txt", "/d"),
          url("https://example.com/", "/e"),
          url("not a url", "/f"),
          { Source: { Type: "urlDownload" }, Target: "/g" },
        ),
      ),
    ).toEqual([
      "[0].Source.Params.SourcePath: localDirectory needs SourcePath: an absolute path on the compute node",
      '[1].Source.Params.SourcePath: source path "relative/dir" must be an absolute path (starting with /)',
      "[1].Source.Params.ReadWrite: must be true or false",
      "[2].Source.Params.CreateAs: is not supported by Shoal: the path must already exist on the compute node",
      "[3].Source.Params.URL: URLs must begin with 'http' or 'https'. The submitted one began with ftp",
      "[4].Source.Params.URL: URL must end with a file name",
      '[5].Source.Params.URL: invalid URL: "not a url"',
      "[6].Source.Params.URL: urlDownload needs URL: an http or https URL ending with a file name",
    ]);
  });

  it("takes at most 32", () => {
    const many = Array.from({ length: 33 }, (_, i) => local(`/s/${i}`, `/t/${i}`));
    expect(refused(inputs(...many))).toEqual([": 33 input sources; the limit is 32"]);
  });
});

describe("a task's Publisher and ResultPaths", () => {
  it("are stored normalized: the type in lower case, names and paths trimmed", () => {
    const { spec, warnings } = accepted(
      job({}, { Publisher: { Type: " Local " }, ResultPaths: [{ Name: " outputs ", Path: "/outputs " }] }),
    );
    expect(warnings).toEqual([]);
    expect(spec.Tasks[0]?.Publisher).toEqual({ Type: "local", Params: {} });
    expect(spec.Tasks[0]?.ResultPaths).toEqual([{ Name: "outputs", Path: "/outputs" }]);
  });

  it("a blank publisher is none, as an older spec without them", () => {
    const task = accepted(job({}, { Publisher: { Type: "" } })).spec.Tasks[0];
    expect(task?.Publisher).toBeUndefined();
    expect(task?.ResultPaths).toBeUndefined();
  });

  it("refuses a publisher type this build does not have, naming the ones it has", () => {
    expect(problems(job({}, { Publisher: { Type: "s3" } }))).toEqual([
      'Tasks[0].Publisher.Type: publisher type "s3" is not supported: this build has local',
    ]);
  });

  it("refuses relative, duplicate, unnamed and reserved result paths, and paths without a publisher", () => {
    expect(
      problems(
        job(
          {},
          {
            Publisher: { Type: "local" },
            ResultPaths: [
              { Name: "a", Path: "outputs" },
              { Name: "a", Path: "/x" },
              { Name: "b", Path: "/x" },
              { Path: "/y" },
              { Name: "stdout", Path: "/z" },
              { Name: "../up", Path: "/w/../v" },
            ],
          },
        ),
      ),
    ).toEqual([
      'Tasks[0].ResultPaths[0].Path: result path "outputs" must be absolute',
      "Tasks[0].ResultPaths[3].Name: missing name",
      'Tasks[0].ResultPaths[4].Name: result name "stdout" is taken by the command\'s own stdout file',
      "Tasks[0].ResultPaths[5].Name: result name \"../up\" must be a single directory name (no '/', not '.' or '..')",
      "Tasks[0].ResultPaths[5].Path: result path \"/w/../v\" cannot contain '..'",
      'Tasks[0].ResultPaths[1].Name: result path with name "a" already exists',
      'Tasks[0].ResultPaths[2].Path: result path "/x" already exists',
    ]);
    expect(problems(job({}, { ResultPaths: [{ Name: "outputs", Path: "/outputs" }] }))).toEqual([
      "Tasks[0].ResultPaths: publisher must be set if result paths are set",
    ]);
  });

  it("refuses a result path at, under or over an input's Target, naming both; beside one it is accepted", () => {
    const local = (Target: string) => ({ Source: { Type: "localDirectory", Params: { SourcePath: "/srv" } }, Target });
    const task = (paths: string[]) => ({
      Publisher: { Type: "local" },
      InputSources: [local("/data"), local("/in/deep")],
      ResultPaths: paths.map((Path, i) => ({ Name: `r${i}`, Path })),
    });
    const why = "the result would publish the input mounted there; give the result a directory of its own";
    expect(problems(job({}, task(["/data/", "/data/out", "/in", "/inputs", "/dat"])))).toEqual([
      `Tasks[0].ResultPaths[0].Path: result path "/data/" is Tasks[0].InputSources[0].Target "/data": ${why}`,
      `Tasks[0].ResultPaths[1].Path: result path "/data/out" lies under Tasks[0].InputSources[0].Target "/data": ` +
        why,
      `Tasks[0].ResultPaths[2].Path: result path "/in" holds Tasks[0].InputSources[1].Target "/in/deep": ${why}`,
    ]);
    expect(accepted(job({}, task(["/outputs", "/in/other", "/database"]))).spec.Tasks[0]?.ResultPaths).toHaveLength(3);
  });
});
