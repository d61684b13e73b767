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
];

const JOB_ID = "<job-id> [options]";

const NODE: CommandSpec = {
  name: "node",
  summary: "list, describe, approve, reject, cordon, drain, label nodes; show their history",
  usage: "<command> [options]",
  examples: ["shoal node list", "shoal node approve n-1 -m 'checked its hardware'"],
  subcommands: [
    {
      name: "list",
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
  summary: "run jobs from a file; list, describe, stop them; show their executions, history and logs",
  usage: "<command> [options]",
  examples: ["shoal job run job.yaml", "shoal job list"],
  subcommands: [
    {
      name: "run",
      summary: "submit a job from a YAML or JSON file ('-': stdin) and wait for its end",
      usage: "<file> [options]",
      description:
        "Submits a job (Bacalhau's models.Job) from a YAML or JSON file, or from stdin with '-', then waits\n" +
        "for it to end. Exit status: 0 Completed; 1 Failed or an error; 3 Stopped; 4 the wait timed out.",
      options: [...RUN_SETTINGS, ...outputOptionSpecs(PLAIN, "table (default), json or yaml", false)],
      shared: ["api", "config"],
      examples: ["shoal job run job.yaml", "shoal job run job.yaml --wait=false", "shoal job run job.yaml --follow"],
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
        ...AS_OF,
        ...outputOptionSpecs(["yaml", "json", "table", "wide"], "yaml (default), json, table or wide"),
      ],
      shared: ["api", "config"],
      examples: ["shoal job describe j-1", "shoal job describe j-1 -o table"],
    },
    {
      name: "executions",
      summary: "list a job's executions",
      usage: JOB_ID,
      options: [
        ...page("executions"),
        { name: "order-by", arg: "FIELD", description: "created_at (default), modified_at, …" },
        { name: "order-reversed", description: "last first" },
        ...outputOptionSpecs(LIST, "table (default), wide, json, yaml or csv"),
      ],
      shared: ["api", "config"],
      examples: ["shoal job executions j-1"],
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
        ...page("entries"),
        ...outputOptionSpecs(LIST, "table (default), wide, json, yaml or csv"),
      ],
      shared: ["api", "config"],
      examples: ["shoal job history j-1", "shoal job history j-1 --event-type execution"],
    },
    {
      name: "stop",
      summary: "stop a job (its executions are cancelled)",
      usage: JOB_ID,
      options: [
        { name: "reason", arg: "TEXT", description: "why, recorded in the job's history" },
        { name: "quiet", description: "print nothing (the exit code says how it went)" },
        ...outputOptionSpecs(PLAIN, "table (default), json or yaml", false),
      ],
      shared: ["api", "config"],
      examples: ["shoal job stop j-1 --reason 'wrong input'"],
    },
    {
      name: "logs",
      summary: "print a job's output; -f: follow it",
      usage: JOB_ID,
      options: [
        { name: "execution-id", short: "e", arg: "ID", description: "read this execution of the job" },
        { name: "tail", short: "t", arg: "N", description: "only the last N lines so far" },
        { name: "follow", short: "f", description: "keep printing until the execution ends" },
        { name: "raw", description: "write the output as the job wrote it, control characters and all" },
      ],
      shared: ["api", "config"],
      examples: ["shoal job logs j-1", "shoal job logs j-1 -f"],
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
      summary: "what changed in the cluster between two moments: nodes and jobs, with who and why",
      usage: "FROM TO [options]",
      description: "FROM and TO are RFC 3339 times with an offset (2026-11-29T10:00:00Z) or store positions.",
      options: outputOptionSpecs(LIST, "table (default), wide, json, yaml or csv"),
      shared: ["api", "config"],
      examples: ["shoal audit diff 2026-11-29T10:00:00Z 2026-11-29T12:00:00Z", "shoal audit diff 100 250 -o json"],
    },
    {
      name: "verify",
      summary: "walk the event log's hash chain and its signed checkpoints; report the first break",
      usage: "[--from P] [--to P] [--checkpoint FILE]... [--key PUB]... [--store PATH | API options]",
      description: "Exits 1 on a break, 0 when the chain holds. The verdict is worked out on this machine.",
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

const AGENT_OUTPUT = outputOptionSpecs(PLAIN, "yaml (default; version: table), json or table");

const agent = (name: string, summary: string, examples: string[]): CommandSpec => ({
  name,
  summary,
  usage: "[options]",
  options: AGENT_OUTPUT,
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
      summary: "run the orchestrator (API, node manager, NATS, event store)",
      usage: "[options]",
      description:
        "Runs the orchestrator: node manager, REST API, embedded NATS and event store. The API serves HTTPS\n" +
        "(API.TLS.CertFile/KeyFile, else a generated certificate; API.TLS.Disable: plain HTTP).",
      shared: ["config"],
      examples: ["shoal serve", "shoal serve -c API.Port=8080 --config shoal.yaml"],
    },
    {
      name: "compute",
      summary: "run a compute node agent",
      usage: "[--node-id ID] [--labels k=v,...] [options]",
      options: [
        { name: "node-id", arg: "ID", description: "node id (default: NodeID config, else generated once)" },
        { name: "labels", arg: "k=v,...", description: "labels of this node" },
        { name: "show-key", description: "print this node's public key and its NATS authorization entry, then exit" },
      ],
      shared: ["config"],
      examples: ["shoal compute --labels zone=a", "shoal compute --show-key"],
    },
    {
      name: "devstack",
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
            { name: "entrypoint", arg: "CMD", description: "override the image's entrypoint" },
            { name: "workdir", short: "w", arg: "DIR", description: "the container's working directory" },
            { name: "task-name", arg: "NAME", description: "the task's name (default main)" },
            { name: "dry-run", description: "print the job (YAML) instead of submitting it" },
            ...RUN_SETTINGS,
            ...outputOptionSpecs(PLAIN, "table (default), json or yaml", false),
          ],
          shared: ["api", "config"],
          examples: [
            "shoal docker run busybox -- echo hello",
            "shoal docker run --cpu 500m --memory 256Mb alpine -- sh -c 'uname -a'",
            "shoal docker run --dry-run busybox > job.yaml",
          ],
        },
      ],
    },
    {
      name: "sim",
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
      examples: ["shoal agent alive", "shoal agent config -o json"],
      subcommands: [
        agent("alive", "whether the orchestrator is alive (exit 1, saying why, when it is not)", [
          "shoal agent alive",
          "shoal agent alive --api-host https://orchestrator.example:1234 -o json",
        ]),
        agent("node", "the orchestrator's own node info (id, type, labels, version)", [
          "shoal agent node",
          "shoal agent node -o json",
        ]),
        agent("version", "the orchestrator's build version", ["shoal agent version", "shoal agent version -o yaml"]),
        agent("config", "the orchestrator's effective configuration, secrets redacted", [
          "shoal agent config",
          "shoal agent config -o json | jq .Orchestrator.NodeManager",
        ]),
      ],
    },
    {
      name: "config",
      summary: "show the effective configuration and where each value came from",
      usage: "<command> [options]",
      subcommands: [
        {
          name: "list",
          summary: "the effective configuration, where each value came from, secrets redacted",
          usage: "[options]",
          options: outputOptionSpecs(PLAIN, "table (default): KEY, SOURCE, VALUE; json and yaml: {Key, Value, Source}"),
          shared: ["config"],
          examples: ["shoal config list", "shoal config list -c API.Port=8080 -o yaml"],
        },
      ],
    },
    {
      name: "version",
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
