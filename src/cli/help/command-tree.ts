import type { CommandSpec, OptionSpec } from "./command-spec.ts";
import { LIST_FORMAT_CHOICES, PLAIN_FORMAT_CHOICES, outputOptionSpecs } from "./shared-options.ts";

// Data only (no command modules imported): main.ts loads this for --help, typos and completion, and must stay fast.

const LIST = LIST_FORMAT_CHOICES;
const PLAIN = PLAIN_FORMAT_CHOICES;

const page = (what: string): OptionSpec[] => [
  { name: "limit", arg: "N", description: `${what} per page` },
  { name: "next-token", arg: "T", description: "the page after the one that printed T" },
];

const AS_OF: OptionSpec[] = [
  { name: "as-of", arg: "TIME", description: "the answer as of a past moment (RFC 3339 with its offset)" },
  { name: "at-position", arg: "N", description: "the answer as of store position N; not with --as-of" },
];

const REASON: OptionSpec[] = [
  { name: "message", short: "m", arg: "TEXT", description: "the reason, recorded in the node's history" },
  { name: "reason", arg: "TEXT", description: "the same as -m" },
];

const SELECTOR: OptionSpec[] = [
  {
    name: "labels",
    short: "l",
    arg: "SELECTOR",
    description: "act on every node the selector matches instead of <id>",
  },
  { name: "yes", short: "y", description: "do it without asking (required without a terminal)" },
];

const ACTION_OUTPUT = outputOptionSpecs(PLAIN, "table (default), json or yaml");

const nodeAction = (name: string, summary: string, example: string, extra: OptionSpec[] = []): CommandSpec => ({
  name,
  summary,
  usage: `<id> [options]  |  shoal node ${name} -l SELECTOR [--yes] [options]`,
  options: [...extra, ...REASON, ...SELECTOR, ...ACTION_OUTPUT],
  shared: ["api", "config"],
  examples: [example, `shoal node ${name} -l zone=a --yes`],
});

const RUN_SETTINGS: OptionSpec[] = [
  {
    name: "wait",
    arg: "[=true|false]",
    description: "wait until the job ends (the default); --wait=false returns at once",
  },
  { name: "id-only", description: "print only the job id" },
  { name: "follow", short: "f", description: "print the job's output until it ends" },
  { name: "wait-timeout", arg: "T", description: "how long to wait: seconds or a duration (90s, 5m)" },
  {
    name: "force",
    description: "run a named job's unchanged spec again as its next version (else refused)",
  },
];

const JOB_ID = "<job-id> [options]";

const VERSION = (description: string): OptionSpec => ({ name: "version", short: "v", arg: "N", description });
/** Bacalhau's version filter of a job's lists: the current version's entries unless asked otherwise. */
const versionsOptions = (what: string): OptionSpec[] => [
  VERSION(`only this version's ${what} (default 0: the current version's)`),
  { name: "all-versions", description: `every version's ${what} (a --version other than 0 wins)` },
];
/** `job run` and `job validate` read the file as a template alike; `what` they do with it. */
const TEMPLATE = (what: string): OptionSpec[] => [
  {
    name: "template-vars",
    short: "V",
    arg: "KEY=VALUE",
    description: "a value for {{.KEY}} in the file (repeat, or a,b=c comma-separated)",
  },
  {
    name: "template-envs",
    short: "E",
    arg: "REGEX",
    description: "the environment variables whose names match, as values ('*': all)",
  },
  { name: "no-template", description: `${what} the file as written: {{ }} is not rendered` },
];
const NAMESPACE: OptionSpec = { name: "namespace", arg: "NS", description: "the namespace a job name is looked up in" };

const NODE_ID: OptionSpec = {
  name: "node-id",
  arg: "ID",
  description: "this node's id, as -c NodeID= (default: generated once, kept under DataDir)",
};

const NODE: CommandSpec = {
  name: "node",
  summary: "list, describe, approve, reject, cordon, drain, label nodes; show their history",
  usage: "<command> [options]",
  examples: ["shoal node list", "shoal node approve n-1 -m 'checked its hardware'"],
  subcommands: [
    {
      name: "list",
      description: "Lists jobs, oldest first (Bacalhau's columns: created, id, name, engine, type, state).",
      summary: "list nodes",
      usage: "[options]",
      options: [
        {
          name: "filter-approval",
          arg: "A",
          description: "only nodes so approved",
          choices: ["pending", "approved", "rejected"],
        },
        {
          name: "filter-status",
          arg: "S",
          description: "only nodes in this state",
          choices: ["healthy", "unhealthy", "unknown", "connected", "disconnected"],
        },
        {
          name: "filter-cordoned",
          arg: "BOOL",
          description: "only cordoned (or uncordoned) nodes",
          choices: ["true", "false"],
        },
        {
          name: "filter-drain",
          arg: "D",
          description: "only nodes in this drain state",
          choices: ["draining", "drained", "expired", "none"],
        },
        {
          name: "labels",
          short: "l",
          arg: "SELECTOR",
          description: "only nodes whose labels match (Kubernetes selector)",
        },
        { name: "show", arg: "GROUPS", description: "column groups, a comma list (default labels,capacity)" },
        ...page("nodes"),
        { name: "order-by", arg: "FIELD", description: "id, type, approval, status, available_cpu, …" },
        { name: "order-reversed", description: "last first" },
        ...AS_OF,
        { name: "watch", short: "w", description: "print the list again whenever a node event is stored" },
        ...outputOptionSpecs(LIST, "table (default), wide, json, yaml or csv"),
      ],
      shared: ["api", "config"],
      examples: [
        "shoal node list",
        "shoal node list --filter-status unhealthy -o wide",
        "shoal node list -l zone=a -w",
      ],
    },
    {
      name: "describe",
      description: "Shows a job with its executions and history.",
      summary: "show one node (id or unique prefix)",
      usage: "<id> [options]",
      options: [
        { name: "show", arg: "GROUPS", description: "column groups of the table, a comma list" },
        ...AS_OF,
        ...outputOptionSpecs(LIST, "yaml (default), table, wide, json or csv"),
      ],
      shared: ["api", "config"],
      examples: ["shoal node describe n-1", "shoal node describe n-1 --as-of 2026-11-29T10:00:00Z"],
    },
    nodeAction("approve", "approve a PENDING or REJECTED node", "shoal node approve n-1"),
    nodeAction("reject", "reject a PENDING or APPROVED node", "shoal node reject n-1 -m 'unknown machine'"),
    {
      name: "delete",
      summary: "remove a node (its history stays)",
      usage: "<id> [options]",
      options: [...REASON, ...ACTION_OUTPUT],
      shared: ["api", "config"],
      examples: ["shoal node delete n-1 -m decommissioned"],
    },
    nodeAction("cordon", "no new placements on the node; its work runs on", "shoal node cordon n-1 -m maintenance"),
    nodeAction("uncordon", "the node takes placements again", "shoal node uncordon n-1"),
    nodeAction("label", "set labels over the node's own, hide or reset them", "shoal node label n-1 zone=b", [
      { name: "remove", arg: "KEY", description: "hide a label (the node's own too); repeatable" },
      { name: "reset", arg: "KEY", description: "drop an override so the node's own value shows again; repeatable" },
    ]),
    {
      name: "preauthorize",
      summary: "let a node that does not exist yet join APPROVED under manual approval",
      usage: "<id> [--public-key KEY] [options]",
      options: [
        { name: "public-key", arg: "KEY", description: "only a node with this NATS public key" },
        { name: "revoke", description: "withdraw the preauthorization" },
        ...REASON,
        ...ACTION_OUTPUT,
      ],
      shared: ["api", "config"],
      examples: ["shoal node preauthorize n-9", "shoal node preauthorize n-9 --revoke"],
    },
    {
      ...nodeAction(
        "drain",
        "move a node's work elsewhere and take no new work",
        "shoal node drain n-1 --deadline 30m",
        [
          { name: "deadline", arg: "DURATION", description: "what is left then is stopped (Go duration, default 1h)" },
          { name: "keep-daemon", description: "leave daemon work running" },
          { name: "disable", description: "end a drain under way, or let a drained node take work again" },
          {
            name: "monitor",
            description: "follow the drain to its end: exit 0 drained, 3 deadline passed, 4 undrained",
          },
          { name: "wait", description: "as --monitor, silently" },
        ],
      ),
      description:
        "Takes no new work; moves batch and service work elsewhere, lets ops work finish, stops daemon work at\n" +
        "the end; what is left at the deadline is stopped.",
    },
    {
      name: "history",
      description:
        "A job's and its executions' history, oldest first (Bacalhau's columns: time, level, job version,\n" +
        "execution id, topic, event) and BY: who caused each entry (operator:<user>, node:<id> or\n" +
        "system:<part>).",
      summary: "every event of a node, oldest first",
      usage: "<id> [options]",
      options: [...page("events"), ...outputOptionSpecs(LIST, "table (default), wide, json, yaml or csv")],
      shared: ["api", "config"],
      examples: ["shoal node history n-1", "shoal node history n-1 -o json"],
    },
  ],
};

const JOB: CommandSpec = {
  name: "job",
  summary: "run, list, describe, stop, rerun jobs; show their versions, executions, history and logs",
  usage: "<command> [options]",
  examples: ["shoal job run job.yaml", "shoal job list"],
  subcommands: [
    {
      name: "run",
      description:
        "Submits a job (Bacalhau's models.Job) from a YAML or JSON file, or from stdin with '-'.\n" +
        "A document holding the job under a top-level Job key (in any case, as the API reads keys; what\n" +
        "`shoal job describe --output yaml` prints) is read as that job. The server checks the job; an\n" +
        "invalid one is refused with every problem named, and nothing is stored. Then it waits for the\n" +
        "job to end, its progress on stderr, and exits with a status that says how it ended\n" +
        "(--wait=false: it returns at once). --dry-run submits nothing: it prints what the job would change\n" +
        "in the job of its name (`- Path: old` / `+ Path: new`, a line each; `No diff detected.` on stderr\n" +
        "when nothing); a job with no name, or a name no job has, is printed as read, after the error.\n" +
        "The file is a template, as Bacalhau's: {{.name}} (or {{ .name }}) is replaced by the value -V or -E\n" +
        'gives it, a name with no value is an error (2); {{- -}} trim, {{/* */}} is a comment, {{"{{"}} writes\n' +
        "braces. Go's other actions (if, range, pipelines, functions) are refused, naming them.\n" +
        "Exit status: 0 Completed (a service or daemon job: it runs); 1 Failed, or an error; 3 Stopped; 4 the\n" +
        "wait timed out, the job still going; 130 Ctrl+C (the job goes on); 2 bad arguments.",
      summary: "submit a job from a YAML or JSON file ('-': stdin) and wait for its end",
      usage: "<file> [options]",
      options: [
        ...RUN_SETTINGS,
        {
          name: "dry-run",
          description: "print what the job would change in the job of its name (PUT /jobs/diff); submit nothing",
        },
        ...TEMPLATE("submit"),
      ],
      shared: ["api", "config"],
      examples: [
        "shoal job run job.yaml",
        "shoal job run job.yaml --wait=false",
        "shoal job run job.yaml --follow",
        "shoal job run job.yaml --dry-run",
        "shoal job run job.yaml -V image=busybox:1.36 -E '^APP_'",
      ],
    },
    {
      name: "list",
      summary: "list jobs",
      usage: "[options]",
      options: [
        { name: "labels", arg: "SELECTOR", description: "only jobs whose labels match (Kubernetes selector)" },
        { name: "namespace", arg: "NS", description: "only jobs of this namespace" },
        ...page("jobs"),
        { name: "order-by", arg: "FIELD", description: "created_at (default), modified_at, …" },
        { name: "order-reversed", description: "newest (or last) first" },
        ...AS_OF,
        { name: "watch", short: "w", description: "print the list again whenever a job event is stored" },
        ...outputOptionSpecs(LIST, "table (default), wide, json, yaml or csv"),
      ],
      shared: ["api", "config"],
      examples: ["shoal job list", "shoal job list --labels env=prod -o wide"],
    },
    {
      name: "describe",
      summary: "show a job, its executions and history",
      usage: JOB_ID,
      options: [
        VERSION("the job as it stood at this version, its executions and history (0: the current)"),
        NAMESPACE,
        ...AS_OF,
        ...outputOptionSpecs(["yaml", "json", "table", "wide"], "yaml (default), json, table or wide"),
      ],
      shared: ["api", "config"],
      examples: ["shoal job describe j-1", "shoal job describe j-1 -o table", "shoal job describe nightly --version 1"],
    },
    {
      name: "executions",
      description:
        "Lists a job's executions (Bacalhau's columns: created, modified, id, job version, node id,\n" +
        "revision, state, desired state).",
      summary: "list a job's executions",
      usage: JOB_ID,
      options: [
        ...versionsOptions("executions"),
        NAMESPACE,
        ...page("executions"),
        { name: "order-by", arg: "FIELD", description: "created_at (default), modified_at, …" },
        { name: "order-reversed", description: "last first" },
        ...outputOptionSpecs(LIST, "table (default), wide, json, yaml or csv"),
      ],
      shared: ["api", "config"],
      examples: [
        "shoal job executions j-1",
        "shoal job executions nightly --version 1",
        "shoal job executions j-1 --all-versions",
      ],
    },
    {
      name: "history",
      summary: "a job's and its executions' history, oldest first",
      usage: JOB_ID,
      options: [
        {
          name: "event-type",
          arg: "TYPE",
          description: "all (default), job or execution",
          choices: ["all", "job", "execution"],
        },
        { name: "execution-id", arg: "ID", description: "only this execution's entries" },
        { name: "since", arg: "T", description: "only entries at or after T (Unix seconds or ISO 8601)" },
        ...versionsOptions("entries"),
        NAMESPACE,
        ...page("entries"),
        ...outputOptionSpecs(LIST, "table (default), wide, json, yaml or csv"),
      ],
      shared: ["api", "config"],
      examples: [
        "shoal job history j-1",
        "shoal job history j-1 --event-type execution",
        "shoal job history nightly --all-versions",
      ],
    },
    {
      name: "stop",
      description:
        "Stops a job: it becomes Stopped and its executions are cancelled on their nodes. A job that has\n" +
        "already ended (Completed, Failed, Stopped) is not stopped: an error, as with Bacalhau.",
      summary: "stop a job (its executions are cancelled)",
      usage: JOB_ID,
      options: [
        { name: "reason", arg: "TEXT", description: "why, recorded in the job's history" },
        NAMESPACE,
        { name: "quiet", description: "print nothing (the exit code says how it went)" },
        ...outputOptionSpecs(PLAIN, "table (default), json or yaml", false),
      ],
      shared: ["api", "config"],
      examples: ["shoal job stop j-1 --reason 'wrong input'"],
    },
    {
      name: "logs",
      description:
        "Prints a job's output, line by line: stdout to stdout, stderr to stderr. The latest execution of\n" +
        "any of the job's versions (--version: of that version) unless --execution-id names another.\n" +
        "Without --follow: what it wrote so far (a finished\n" +
        "execution: what its node reported); with it, lines as they come, until the execution ends.\n" +
        "Control characters the job wrote (terminal escape sequences, carriage returns, …) are shown as\n" +
        "\\uXXXX, so that a job cannot clear or rewrite your terminal; newlines and tabs are kept.",
      summary: "print a job's output; -f: follow it",
      usage: JOB_ID,
      options: [
        {
          name: "execution-id",
          short: "e",
          arg: "ID",
          description: "read this execution of the job (its id or a unique prefix, such as the short id)",
        },
        VERSION("read this version's latest execution (0: the current)"),
        NAMESPACE,
        { name: "tail", short: "t", arg: "N", description: "only the last N lines so far" },
        { name: "follow", short: "f", description: "keep printing until the execution ends" },
        { name: "raw", description: "write the output as the job wrote it, control characters and all" },
      ],
      shared: ["api", "config"],
      examples: ["shoal job logs j-1", "shoal job logs j-1 -f"],
    },
    {
      name: "versions",
      description:
        "Lists every version of a job, oldest first (Bacalhau's columns: created at, job version; wide adds\n" +
        "the state and message each version had when the next replaced it). A named job submitted again, or\n" +
        "rerun, gets its next version.",
      summary: "list a job's versions",
      usage: JOB_ID,
      options: [NAMESPACE, ...outputOptionSpecs(LIST, "table (default), wide, json, yaml or csv")],
      shared: ["api", "config"],
      examples: ["shoal job versions nightly", "shoal job versions j-1 -o json"],
    },
    {
      name: "rerun",
      description:
        "Runs a job again as its next version: the spec of --version (default: the current one). A job\n" +
        "Pending or Queued cannot be rerun (an error, as with Bacalhau). Prints the new version, then waits for\n" +
        "the job to end as `shoal job run` does, with the same exit status.",
      summary: "run a job again as its next version, from its current or an earlier version",
      usage: JOB_ID,
      options: [
        VERSION("the version whose spec runs again (default 0: the current)"),
        { name: "reason", arg: "TEXT", description: "why, recorded in the job's history" },
        NAMESPACE,
        ...RUN_SETTINGS.filter((o) => o.name !== "force"),
      ],
      shared: ["api", "config"],
      examples: ["shoal job rerun j-1", "shoal job rerun nightly --version 1 --reason 'compare' --wait=false"],
    },
    {
      name: "validate",
      description:
        "Checks a job file (YAML or JSON, '-': stdin) without a server, by the same rules the API applies\n" +
        "to a submission, with the JobDefaults and JobLimits of the config given (-c, --config; else Shoal's\n" +
        "defaults): prints OK (and any warnings), or every problem. The file is a template, rendered as\n" +
        "job run renders it (-V, -E, --no-template). Exit status: 0 valid; 1 invalid (or not YAML or JSON, or\n" +
        "a template that does not render); 2 bad arguments or a file that cannot be read.",
      summary: "check a job file locally, as the API would",
      usage: "<file> [options]",
      options: TEMPLATE("check"),
      shared: ["config"],
      examples: ["shoal job validate job.yaml", "shoal job validate job.yaml -V image=busybox:1.36"],
    },
    {
      name: "get",
      description:
        "Downloads a job's results and unpacks them into --output-dir (default: the current directory), as\n" +
        "bacalhau job get does: each result path under its name, with the execution's stdout, stderr and\n" +
        "exitCode beside them. The results of the job's current version, unless --version or --all-versions\n" +
        "asks for others; with several, stdout and stderr are appended one after another, exitCode holds one\n" +
        "code a line, and a file two of them wrote is refused (--raw keeps each result's archive on its own,\n" +
        "in DIR/raw). Each download is checked against the size and SHA256 its node published; an archive\n" +
        "with an entry that would land outside the directory is refused, and a file already there is not\n" +
        "overwritten. Nothing reaches DIR unless the whole download succeeds.",
      summary: "download a job's results",
      usage: JOB_ID,
      options: [
        { name: "output-dir", short: "o", arg: "DIR", description: "an existing directory to unpack into (default .)" },
        { name: "max-size", arg: "SIZE", description: "refuse a result that unpacks to more than SIZE (default 1GiB)" },
        { name: "raw", description: "keep each result's archive as DIR/raw/<execution id>.tar.gz, nothing merged" },
        ...versionsOptions("results"),
        NAMESPACE,
      ],
      shared: ["api", "config"],
      examples: [
        "shoal job get j-1",
        "shoal job get j-1 --output-dir results",
        "shoal job get j-1 --all-versions --raw",
      ],
    },
  ],
};

const AUDIT: CommandSpec = {
  name: "audit",
  summary: "verify the event log's hash chain; what changed between two moments; node membership",
  usage: "<command> [options]",
  examples: ["shoal audit verify", "shoal audit diff 2026-11-29T10:00:00Z 2026-11-29T12:00:00Z"],
  subcommands: [
    {
      name: "diff",
      description:
        "What changed in the cluster between two moments: nodes that joined or were deleted, approved or\n" +
        "rejected, cordoned or uncordoned, relabelled, drained; jobs submitted, completed, failed or\n" +
        "stopped; each with when, who and why. FROM and TO are RFC 3339 times with an offset\n" +
        "(2026-11-29T10:00:00Z) or store positions. A change undone inside the window is listed, and so\n" +
        "is its undoing, in the order they happened.",
      summary: "what changed in the cluster between two moments: nodes and jobs, with who and why",
      usage: "FROM TO [options]",
      options: outputOptionSpecs(LIST, "table (default), wide, json, yaml or csv"),
      shared: ["api", "config"],
      examples: ["shoal audit diff 2026-11-29T10:00:00Z 2026-11-29T12:00:00Z", "shoal audit diff 100 250 -o json"],
    },
    {
      name: "verify",
      description:
        "Walks the event log in store order, recomputes every event's link from its stored bytes and the\n" +
        "link before it, checks every signed checkpoint against the log, and reports the first break: the\n" +
        "position, the event (stream@revision), and what differs (an event edited, rows deleted or\n" +
        "reordered, a link edited, a checkpoint that does not match). Exits 1 on a break, 0 when the chain\n" +
        "holds. The verdict is worked out here, on this machine: the orchestrator only hands over its rows.",
      summary: "walk the event log's hash chain and its signed checkpoints; report the first break",
      usage: "[--from P] [--to P] [--checkpoint FILE]... [--key PUB]... [--store PATH | API options]",
      options: [
        { name: "from", arg: "P", description: "start at position P, trusting the link stored before it" },
        { name: "to", arg: "P", description: "stop after position P" },
        { name: "checkpoint", arg: "FILE", description: "checkpoints saved outside Shoal; repeatable" },
        { name: "key", arg: "PUB", description: "an audit public key to trust (base64url); repeatable" },
        { name: "store", arg: "PATH", description: "read this SQLite store file directly instead of the API" },
        { name: "quiet", description: "no progress lines" },
      ],
      shared: ["api", "config"],
      examples: ["shoal audit verify", "shoal audit verify --store data/events.db --checkpoint checkpoints.ndjson"],
    },
    {
      name: "membership",
      description:
        "Per node, from the stored events alone: when it joined (its first join request), its membership at\n" +
        "the end of the window and who made the latest change and why, and how long it was HEALTHY,\n" +
        "UNHEALTHY and UNKNOWN inside the window (docs/audit.md, Membership over a window).",
      summary: "per node: when it joined, who approved or rejected it and why, its health time in a window",
      usage: "[options]",
      options: [
        { name: "since", arg: "T", description: "start of the window, RFC 3339 (default: the first event)" },
        { name: "until", arg: "T", description: "end of the window (default: now)" },
        { name: "node", arg: "ID", description: "a node's id or a unique prefix; repeatable" },
        ...page("nodes"),
        ...outputOptionSpecs(LIST, "table (default), wide, json, yaml or csv"),
      ],
      shared: ["api", "config"],
      examples: ["shoal audit membership --since 2026-11-29T00:00:00Z", "shoal audit membership --node n-1 -o yaml"],
    },
  ],
};

const agent = (name: string, summary: string, description: string, examples: string[]): CommandSpec => ({
  name,
  summary,
  usage: "[options]",
  description,
  options:
    name === "version"
      ? outputOptionSpecs(PLAIN, "table (default), yaml or json")
      : outputOptionSpecs(["yaml", "json"], "yaml (default) or json"),
  shared: ["api", "config"],
  examples,
});

/** The whole `shoal` command tree, in the order the help lists it. */
export const COMMAND_TREE: CommandSpec = {
  name: "shoal",
  summary: "event-sourced node management for compute clusters",
  usage: "<command> [options]",
  examples: ["shoal devstack", "shoal node list", "shoal help node drain"],
  subcommands: [
    {
      name: "serve",
      description:
        "Runs the orchestrator: node manager, REST API, embedded NATS and event store.\n" +
        "The API serves HTTPS: API.TLS.CertFile/KeyFile, else a CA and certificate generated\n" +
        "under DataDir/credentials/tls (API.TLS.Disable: plain HTTP). SIGHUP serves the\n" +
        "certificate files as they are then.",
      summary: "run the orchestrator (API, node manager, NATS, event store)",
      usage: "[--node-id ID] [options]",
      options: [NODE_ID],
      shared: ["config"],
      examples: ["shoal serve", "shoal serve --node-id orch-1 -c API.Port=8080 --config shoal.yaml"],
    },
    {
      name: "compute",
      description:
        "Runs a compute node agent that registers with the orchestrator(s) in Compute.Orchestrators,\n" +
        "heartbeats every Compute.Heartbeat.Interval and reports its info and resources.",
      summary: "run a compute node agent",
      usage: "[--node-id ID] [--labels k=v,...] [options]",
      options: [
        NODE_ID,
        { name: "labels", arg: "k=v,...", description: "labels of this node" },
        { name: "show-key", description: "print this node's public key and its NATS authorization entry, then exit" },
      ],
      shared: ["config"],
      examples: ["shoal compute --labels zone=a", "shoal compute --show-key"],
    },
    {
      name: "devstack",
      description:
        "Starts an orchestrator (node-0) and N compute nodes (node-1 … node-N) in one process,\n" +
        "on the embedded defaults: SQLite in DataDir, a nats-server child, the API on API.Port.\n" +
        "The compute nodes run jobs in Docker: it checks that an engine answers and builds the\n" +
        "README's tour image (from busybox-static) when it is missing.",
      summary: "run an orchestrator and N compute nodes in one process",
      usage: "[--compute N] [options]",
      options: [{ name: "compute", arg: "N", description: "number of compute nodes (default 3)" }],
      shared: ["config"],
      examples: ["shoal devstack", "shoal devstack --compute 5"],
    },
    NODE,
    JOB,
    {
      name: "events",
      description:
        "The history of the whole cluster: every stored event of every node, job and execution, oldest\n" +
        "first, with who caused it and why. Filters combine (all must hold); a filter given several values\n" +
        "(repeated, or as a comma list) takes any of them.",
      summary: "the whole cluster's history, filtered by entity, type, actor and time",
      usage: "[options]",
      options: [
        {
          name: "category",
          arg: "C",
          description: "node, job, execution or workflow",
          choices: ["node", "job", "execution", "workflow"],
        },
        { name: "entity", arg: "ID", description: "a node's, job's or execution's id" },
        { name: "type", arg: "T", description: "an event type: NodeApproved, JobStopped, …" },
        { name: "actor", arg: "A", description: "who caused it, type[:id]: operator:alice, node:n-1, system" },
        { name: "since", arg: "T", description: "at or after T (RFC 3339 with an offset)" },
        { name: "until", arg: "T", description: "at or before T" },
        { name: "after", arg: "P", description: "after store position P" },
        ...page("events"),
        { name: "follow", short: "f", description: "print the events as they are stored, until Ctrl-C" },
        ...outputOptionSpecs([...LIST, "ndjson"], "table (default), wide, json, yaml, csv or ndjson"),
      ],
      shared: ["api", "config"],
      examples: ["shoal events --category node --since 2026-11-29T10:00:00Z", "shoal events -f -o ndjson"],
    },
    AUDIT,
    {
      name: "docker",
      summary: "run a Docker container as a job (docker run)",
      usage: "<command> [options]",
      subcommands: [
        {
          name: "run",
          description:
            "Runs a Docker container as a job: builds a batch job (Bacalhau's models.Job, as `bacalhau docker\n" +
            "run` builds it) from the flags and submits it. Everything after IMAGE is the container's command;\n" +
            "put it after '--' when it has options of its own (shoal docker run busybox -- sh -c 'echo hi').\n" +
            "-i/--input mounts data as Bacalhau's does: URI[:DEST] or src=URI,dst=DEST[,opt=rw=true], DEST\n" +
            "/inputs by default; file:///PATH is a directory of the compute node (localDirectory; the node must\n" +
            "allow it), http:// and https:// a file downloaded (urlDownload). Other storage is refused.",
          summary: "build a batch job from the flags and submit it, as bacalhau docker run",
          usage: "[options] IMAGE [-- COMMAND [ARG…]]",
          options: [
            { name: "name", arg: "NAME", description: "the job's name (default: its id)" },
            { name: "namespace", arg: "NS", description: "the job's namespace (default: default)" },
            { name: "priority", arg: "N", description: "the job's priority" },
            { name: "count", arg: "N", description: "how many executions to run, each on its own node" },
            {
              name: "target",
              arg: "any|all",
              description: "any: a batch job; all: an ops job",
              choices: ["any", "all"],
            },
            { name: "labels", short: "l", arg: "K=V", description: "the job's labels (repeatable)" },
            { name: "constraints", arg: "SELECTOR", description: "run only on nodes whose labels match" },
            { name: "cpu", arg: "C", description: "CPU (0.5, 500m)" },
            { name: "memory", arg: "M", description: "memory (512Mb, 1Gi, …)" },
            { name: "disk", arg: "D", description: "disk (1Gb, …)" },
            { name: "gpu", arg: "N", description: "GPUs" },
            { name: "network", arg: "TYPE", description: "the container's network (default: the node's choice)" },
            { name: "domain", arg: "D", description: "a domain the HTTP network may reach (repeatable)" },
            { name: "timeout", arg: "T", description: "the job's total timeout: seconds or a duration" },
            { name: "execution-timeout", arg: "T", description: "each execution's timeout" },
            { name: "queue-timeout", arg: "T", description: "how long the job may wait for a node" },
            { name: "env", short: "e", arg: "K=V", description: "an environment variable (repeatable)" },
            { name: "input", short: "i", arg: "URI", description: "mount file:// or http(s):// data (repeatable)" },
            { name: "entrypoint", arg: "CMD", description: "override the image's entrypoint" },
            { name: "workdir", short: "w", arg: "DIR", description: "the container's working directory" },
            { name: "task-name", arg: "NAME", description: "the task's name (default main)" },
            {
              name: "output",
              short: "o",
              arg: "NAME:PATH",
              description: "a result path: the container's PATH published as NAME (repeatable; needs -p)",
            },
            { name: "publisher", short: "p", arg: "TYPE", description: "where results are published: local" },
            { name: "dry-run", description: "print the job (YAML) instead of submitting it" },
            ...RUN_SETTINGS,
          ],
          shared: ["api", "config"],
          examples: [
            "shoal docker run busybox -- echo hello",
            "shoal docker run --cpu 500m --memory 256Mb alpine -- sh -c 'uname -a'",
            "shoal docker run --dry-run busybox > job.yaml",
            "shoal docker run -i file:///srv/data:/data -i https://example.com/a.csv busybox -- ls /data /inputs",
            "shoal docker run -p local -o outputs:/outputs busybox -- sh -c 'date > /outputs/now'",
          ],
        },
      ],
    },
    {
      name: "sim",
      description:
        "Runs N virtual compute nodes in this process, each with its own key and its own NATS\n" +
        "connection, over the real protocol: join with the join token, then heartbeats, node info and\n" +
        "resources as itself. Prints a progress line every second. Each node holds one file descriptor\n" +
        "(ulimit -n); run several sims with different --id-prefix for more.",
      summary: "run N virtual compute nodes (real protocol, one connection each) for load tests",
      usage: "--nodes N [options]",
      options: [
        { name: "nodes", arg: "N", description: "how many nodes (required)" },
        { name: "orchestrator", arg: "URL", description: "NATS URL of the orchestrator" },
        { name: "token-file", arg: "FILE", description: "file holding the join token" },
        { name: "heartbeat-interval", arg: "D", description: "heartbeat period (default 5s)" },
        { name: "jitter", arg: "D", description: "each report up to this much early or late (default 1s)" },
        { name: "join-rate", arg: "R[/s]", description: "node starts per second (default 1000/s)" },
        { name: "kill", arg: "F", description: "kill this share of the nodes (0 < F ≤ 1)" },
        { name: "kill-at", arg: "D", description: "when to kill, after the start (default 60s)" },
        { name: "revive-after", arg: "D", description: "restart the killed nodes this long after the kill" },
        { name: "duration", arg: "D", description: "stop after this long (default: until Ctrl-C)" },
        { name: "id-prefix", arg: "P", description: "node ids are P-<index>" },
        { name: "run-work", description: "nodes take work (executions run in memory)" },
        { name: "run-time", arg: "D", description: "how long an execution runs with --run-work (default 1s)" },
      ],
      shared: ["config"],
      examples: ["shoal sim --nodes 1000", "shoal sim --nodes 200 --kill 0.1 --kill-at 30s --revive-after 1m"],
    },
    {
      name: "leaf",
      summary: "write a leaf nats-server's configuration, or revoke one",
      usage: "<command> [options]",
      subcommands: [
        {
          name: "config",
          description:
            "Writes a ready-to-run leaf nats-server configuration (leaf.conf) and its two credentials files\n" +
            "into DIR, for a nats-server near the compute nodes that holds their connections and connects to\n" +
            "the orchestrator's own nats-server (Orchestrator.NATS.LeafNodes.Port). Run it beside the\n" +
            "orchestrator, with its DataDir: the configuration carries the NATS operator and the account as\n" +
            "they stand now, revocations included. Start the leaf with: nats-server -c DIR/leaf.conf\n" +
            "(docs/operations.md, Leaf servers).",
          summary: "write a ready-to-run leaf nats-server configuration and its credentials",
          usage: "--out DIR [--leaf-dir PATH] [--hub URL] [--listen HOST:PORT] [--name NAME] [options]",
          options: [
            { name: "out", arg: "DIR", description: "where to write leaf.conf and its credentials (made 0700)" },
            {
              name: "leaf-dir",
              arg: "PATH",
              description: "the absolute path the files will have on the leaf's machine",
            },
            { name: "hub", arg: "URL", description: "the orchestrator's leafnode URL as the leaf reaches it" },
            {
              name: "listen",
              arg: "HOST:PORT",
              description: "where the leaf accepts compute nodes (default 0.0.0.0:4222)",
            },
            { name: "name", arg: "NAME", description: "the leaf's server name" },
          ],
          shared: ["config"],
          examples: ["shoal leaf config --out ./leaf-a --hub nats-leaf://orchestrator.example:7422"],
        },
        {
          name: "revoke",
          description:
            "Cuts a leaf server off the orchestrator: its login to the hub (the key of its leaf-shoal.creds)\n" +
            "is revoked in the account JWT, which the orchestrator pushes to its nats-server and every leaf,\n" +
            "as it does for rejected nodes. The hub drops the leaf at once and refuses it from then on, so\n" +
            "its nodes can no longer reach the orchestrator; other leaves are not affected. To bring the\n" +
            "machine back, write it a new configuration (shoal leaf config). Needs write:node on the API.",
          summary: "cut a leaf server off the orchestrator",
          usage: "(--dir DIR | --creds FILE | --key KEY)... [options]",
          options: [
            { name: "dir", arg: "DIR", description: "a directory shoal leaf config wrote" },
            { name: "creds", arg: "FILE", description: "a leaf's leaf-shoal.creds" },
            { name: "key", arg: "KEY", description: "the public key of a leaf's login (U…)" },
          ],
          shared: ["api", "config"],
          examples: ["shoal leaf revoke --dir ./leaf-a"],
        },
      ],
    },
    {
      name: "nats-operator",
      description:
        "Makes Shoal the operator of an external NATS cluster (docs/security.md, Shoal as the operator of an\n" +
        "external NATS). Writes into DIR the NATS operator keys (once; a later run keeps them), and beside DIR\n" +
        "nats-operator.conf, which every server of the cluster includes: the operator, the system account,\n" +
        "a full account resolver and the Shoal account of the join token (Orchestrator.Auth.Token, as the\n" +
        "orchestrators have it). Copy DIR to every orchestrator and set Orchestrator.NATS.OperatorDir to it.",
      summary: "make Shoal the operator of an external NATS cluster (its keys and the servers' config)",
      usage: "--dir DIR [--conf-out FILE] [--resolver-dir PATH] [options]",
      options: [
        { name: "dir", arg: "DIR", description: "where to keep the keys (made 0700)" },
        { name: "conf-out", arg: "FILE", description: "where to write the servers' configuration" },
        { name: "resolver-dir", arg: "PATH", description: "where each server keeps the account JWTs" },
      ],
      shared: ["config"],
      examples: ["shoal nats-operator --dir ./nats-operator"],
    },
    {
      name: "tls",
      summary: "make a CA and certificates for an external NATS cluster and its clients",
      usage: "<command> [options]",
      subcommands: [
        {
          name: "issue",
          description:
            "Makes the TLS files for servers Shoal does not run itself, such as the NATS cluster of several\n" +
            "orchestrators (Orchestrator.NATS.URL) and the KurrentDB cluster (EventStore.URL), and for clients\n" +
            "that present a certificate (mutual TLS), as PEM files in DIR (made 0700; keys 0600):\n" +
            "\n" +
            "  ca.crt, ca.key        a CA (ECDSA P-256, 10 years), created the first time and kept from then on:\n" +
            "                        never replaced by this command. Servers and clients trust ca.crt.\n" +
            "  NAME.crt, NAME.key    for each --server: a certificate (1 year) for those host names and\n" +
            "                        addresses, for a TLS server and for the client side of its cluster routes\n" +
            "  NAME.crt, NAME.key    for each --client: a client certificate (1 year) with the common name NAME,\n" +
            "                        such as the orchestrator's Orchestrator.NATS.TLS.ClientCertFile\n" +
            "  NAME.crt, NAME.key    for each --kurrentdb-node: a KurrentDB node's certificate (1 year; an RSA\n" +
            "                        key, as KurrentDB reads no other) for the names it is dialled and gossips\n" +
            "                        by, with the common name kurrentdb-node that every node of a cluster shares\n" +
            "                        (each node lets in only nodes with its own)\n" +
            "\n" +
            "Run it again with the same DIR to add certificates or renew them: one is issued again only when\n" +
            "less than 30 days of it are left, when it does not cover the hosts given, or when it is not the\n" +
            "CA's; otherwise it is kept (docs/security.md, NATS: TLS).",
          summary: "issue (or renew) a CA and server and client certificates as PEM files",
          usage:
            "--out DIR [--server NAME=HOST[,HOST...]]... [--client NAME]...\n" +
            "                       [--kurrentdb-node NAME=HOST[,HOST...]]...",
          options: [
            {
              name: "out",
              arg: "DIR",
              description: "where the files are (a shared directory such as /tmp is refused)",
            },
            { name: "server", arg: "NAME=HOST[,HOST]", description: "a server certificate NAME.crt for these hosts" },
            { name: "client", arg: "NAME", description: "a client certificate NAME.crt" },
            { name: "kurrentdb-node", arg: "NAME=HOST[,HOST]", description: "a KurrentDB node's certificate NAME.crt" },
          ],
          examples: ["shoal tls issue --out ./tls --server nats-1=nats-1,localhost --client orchestrator"],
        },
      ],
    },
    {
      name: "agent",
      summary: "ask the orchestrator about itself: alive, node, version, config",
      usage: "<command> [options]",
      description: "Asks the orchestrator about itself, as Bacalhau's `bacalhau agent …`.",
      examples: ["shoal agent alive", "shoal agent config -o json"],
      subcommands: [
        agent(
          "alive",
          "whether the orchestrator is alive (exit 1, saying why, when it is not)",
          "Asks GET /api/v1/agent/alive. Prints Status: OK while NATS, JetStream and the event store are usable;\n" +
            "otherwise the error says which is not, and the exit code is 1. Needs no credentials.",
          ["shoal agent alive", "shoal agent alive --api-host https://orchestrator.example:1234 -o json"],
        ),
        agent(
          "node",
          "the orchestrator's own node info (id, type, labels, version)",
          "Asks GET /api/v1/agent/node (needs read:agent, or anonymous read).",
          ["shoal agent node", "shoal agent node -o json"],
        ),
        agent(
          "version",
          "the orchestrator's build version",
          "Asks GET /api/v1/agent/version (needs no credentials). `shoal version` prints this CLI's beside it.",
          ["shoal agent version", "shoal agent version -o yaml"],
        ),
        agent(
          "config",
          "the orchestrator's effective configuration, secrets redacted",
          "Asks GET /api/v1/agent/config (needs read:agent; never anonymous). Prints the configuration the\n" +
            "orchestrator runs with, by section as Bacalhau's `agent config` does, with its secrets shown as\n" +
            "<redacted>; secrets aside, the YAML is a config file Shoal reads (--config). `shoal config list`\n" +
            "shows this machine's configuration and where each value came from, without a server.",
          ["shoal agent config", "shoal agent config -o json | jq .Orchestrator.NodeManager"],
        ),
      ],
    },
    {
      name: "config",
      summary: "show the effective configuration and where each value came from",
      usage: "<command> [options]",
      subcommands: [
        {
          name: "list",
          description:
            "Prints every config key with the value this machine's `shoal` commands would use, and where it came\n" +
            "from: default, file PATH (--config, -c file.yaml), env SHOAL_… (an environment variable), flag -c\n" +
            "(-c Key=Value). Higher sources win: flags, then the environment, then files (later files win),\n" +
            "then defaults. Secrets (join tokens, NATS passwords and tokens, API.Auth.Users' passwords and API\n" +
            "keys, credentials written into URLs) show as <redacted>. Needs no server: `shoal agent config`\n" +
            "asks a running orchestrator for the configuration it runs with.",
          summary: "the effective configuration, where each value came from, secrets redacted",
          usage: "[options]",
          options: outputOptionSpecs(
            LIST,
            "table (default) or csv: KEY, SOURCE, VALUE; json and yaml: a list of {Key, Value, Source}",
          ),
          shared: ["config"],
          examples: ["shoal config list", "shoal config list -c API.Port=8080 -o yaml"],
        },
      ],
    },
    {
      name: "version",
      description:
        "Prints this CLI's version and the orchestrator's (GET /api/v1/agent/version, which needs no\n" +
        "credentials). When the orchestrator cannot be reached, the client's version is still printed,\n" +
        "a note on stderr says why the server's is missing, and the exit code is 0. `shoal --version`\n" +
        "prints the client's alone.",
      summary: "print this CLI's version and the orchestrator's",
      usage: "[options]",
      options: [
        { name: "client", description: "the client's version only: no request to the orchestrator" },
        ...outputOptionSpecs(PLAIN, "table (default), json or yaml"),
      ],
      shared: ["api", "config"],
      examples: ["shoal version", "shoal version --client -o json"],
    },
    {
      name: "completion",
      summary: "print a shell completion script (bash or zsh)",
      usage: "bash|zsh",
      description: "Load it in your shell's start-up file: source <(shoal completion bash).",
      examples: ["source <(shoal completion bash)", "shoal completion zsh > ~/.zfunc/_shoal"],
    },
    {
      name: "help",
      summary: "show the help of a command",
      usage: "[command [subcommand]]",
      examples: ["shoal help node drain"],
    },
  ],
};
