import { DEFAULT_JOB_LIMITS as L } from "../../machines/job/job-limits.ts";
import { DEFAULT_CAPABILITIES, DEFAULT_PIDS_LIMIT } from "../compute/executor/container-confinement.ts";
import { DEFAULT_MAX_RESULT_BYTES } from "./default-max-result-bytes.ts";
import { DEFAULT_RESULT_RETENTION } from "./default-result-retention.ts";
import { formatExactBytes } from "./byte-size.ts";
import type { AnonymousAccess, AuthUser } from "./auth-users.ts";
import { formatDuration } from "./duration.ts";

/** A per-node or per-group health threshold override. */
export interface HealthOverride {
  readonly NodeIDs?: readonly string[];
  readonly Selector?: string;
  readonly DisconnectTimeout?: number;
  readonly UnknownTimeout?: number;
}

export type KeyKind =
  "string" | "nodeId" | "int" | "number" | "bool" | "duration" | "bytes" | "list" | "labels" | "overrides" | "users";

interface KeyDef<K extends KeyKind, V> {
  readonly kind: K;
  readonly default: V;
  readonly description: string;
  /** For strings: the only values allowed (matched ignoring case). */
  readonly choices?: readonly string[];
  /** Holds a password, token or key: errors name the key and never echo the value. */
  readonly secret?: boolean;
  /** For whole numbers: the largest allowed (a port's 65535; otherwise 2^31 - 1). */
  readonly max?: number;
}

const str = (d: string, description: string): KeyDef<"string", string> => ({ kind: "string", default: d, description });
const int = (d: number, description: string): KeyDef<"int", number> => ({ kind: "int", default: d, description });
const port = (d: number, description: string): KeyDef<"int", number> => ({ ...int(d, description), max: 65535 });
/** A non-negative number that may have a fraction (a rate, a share). */
const num = (d: number, description: string): KeyDef<"number", number> => ({ kind: "number", default: d, description });
const bool = (d: boolean, description: string): KeyDef<"bool", boolean> => ({ kind: "bool", default: d, description });
const dur = (d: number, description: string): KeyDef<"duration", number> => ({
  kind: "duration",
  default: d,
  description,
});
/** A string that is a secret (password, token). */
const secretStr = (description: string): KeyDef<"string", string> => ({ ...str("", description), secret: true });
const bytes = (d: number, description: string): KeyDef<"bytes", number> => ({ kind: "bytes", default: d, description });

/**
 * Every config key Shoal reads. Names follow Bacalhau's where Bacalhau has one.
 * Durations are held in milliseconds.
 */
export const CONFIG_KEYS = {
  DataDir: str(
    "",
    "Directory where Shoal keeps its state (event store, NATS JetStream data, node id). Default ~/.shoal",
  ),
  NodeID: {
    kind: "nodeId",
    default: "",
    description: "This process's node id. Empty: generated once as n-<uuid> and kept in DataDir",
  } as KeyDef<"nodeId", string>,
  Labels: {
    kind: "labels",
    default: {} as Record<string, string>,
    description: "Labels of this node, k=v,k2=v2",
  } as KeyDef<"labels", Record<string, string>>,
  "API.Host": str("0.0.0.0", "Address the REST API listens on (serve) or connects to (node commands)"),
  "API.Port": port(1234, "Port of the REST API"),
  "API.Auth.Users": {
    kind: "users",
    secret: true,
    default: [] as AuthUser[],
    description:
      "REST API users: Username/Password (plain or bcrypt) and/or APIKey, with Capabilities. Empty: serve generates an admin API key in DataDir/credentials",
  } as KeyDef<"users", AuthUser[]>,
  "API.Auth.AnonymousAccess": {
    kind: "string",
    default: "read" as AnonymousAccess,
    choices: ["read", "none"],
    description:
      "read: callers without credentials may read nodes and agent info (not the history); none: every route but the public ones needs credentials",
  } as KeyDef<"string", AnonymousAccess>,
  "API.TLS.CertFile": str(
    "",
    "PEM certificate (then any intermediates) the API serves HTTPS with, with API.TLS.KeyFile. Empty: serve generates a CA and a certificate under DataDir/credentials/tls",
  ),
  "API.TLS.KeyFile": str("", "PEM private key of API.TLS.CertFile"),
  "API.TLS.Disable": bool(
    false,
    "Serve the API over plain HTTP (serve), or talk plain HTTP to it (the CLI): only behind a proxy that does TLS, or on one machine",
  ),
  "API.EventStream.KeepAlive": dur(
    15_000,
    "The event stream (GET /events/stream) sends a keep-alive comment this often to each client with nothing waiting",
  ),
  "API.EventStream.ClientBufferBytes": bytes(
    1024 ** 2,
    "An event stream client with more than this waiting on its connection is cut off, told where to resume",
  ),
  "API.EventStream.MaxBufferedBytes": bytes(
    256 * 1024 ** 2,
    "What the event stream's clients' connections hold together, at most; past it, the client holding the most is cut off",
  ),
  "API.EventStream.RingBytes": bytes(
    32 * 1024 ** 2,
    "The newest events' stream messages kept in memory (while a client is connected), for clients switching from the store to live",
  ),
  "API.EventStream.MaxClients": int(2000, "Event stream clients at once; more are answered 503"),
  "API.EventStream.MaxCatchUps": int(
    8,
    "Event stream clients catching up from the store at once; the others wait their turn",
  ),
  "Orchestrator.Host": str("0.0.0.0", "Address the embedded NATS server listens on for compute nodes"),
  "Orchestrator.Port": port(4222, "Port the embedded NATS server listens on for compute nodes"),
  "Orchestrator.NATS.URL": str(
    "",
    "Use this external NATS (with JetStream) instead of starting an embedded nats-server; the servers of a NATS " +
      "cluster separated by commas (nats://a:4222,nats://b:4222)",
  ),
  "Orchestrator.NATS.User": str(
    "",
    "External NATS: the user the orchestrator logs in as (with Orchestrator.NATS.Password)",
  ),
  "Orchestrator.NATS.Password": secretStr("External NATS: the password of Orchestrator.NATS.User"),
  "Orchestrator.NATS.Token": secretStr("External NATS: a token to log in with instead of a user"),
  "Orchestrator.NATS.CredsFile": str("", "External NATS: a .creds file (user JWT and nkey seed) to log in with"),
  "Orchestrator.NATS.OperatorDir": str(
    "",
    "External NATS run with Shoal as its operator: the directory of the NATS operator keys `shoal nats-operator` " +
      "wrote (the same on every orchestrator of a cluster). The orchestrator issues its own and each node's login " +
      "and revokes them through the cluster's account resolver; instead of User, Token or CredsFile",
  ),
  "Orchestrator.NATS.JetStreamMaxStore": bytes(
    1024 ** 3,
    "Disk JetStream may use (embedded server); the cluster-event stream keeps the newest events within 90% of it",
  ),
  "Orchestrator.NATS.GOGC": int(
    0,
    "Embedded nats-server: its Go garbage collector's GOGC (heap growth in % over the live heap before a collection; lower: less memory, more CPU). 0: Go's default (100), or GOGC from Shoal's environment",
  ),
  "Orchestrator.NATS.GOMEMLIMIT": bytes(
    0,
    "Embedded nats-server: its Go runtime's soft memory limit (GOMEMLIMIT); the server collects harder as it nears it. 0: none, or GOMEMLIMIT from Shoal's environment",
  ),
  "Orchestrator.NATS.LeafNodes.Port": port(
    0,
    "Port the embedded nats-server accepts leaf servers on (on Orchestrator.Host; `shoal leaf config` writes their configuration). 0: no leaf servers",
  ),
  "Orchestrator.NATS.TLS.CertFile": str(
    "",
    "PEM certificate the embedded nats-server serves TLS with (client and leaf ports), with " +
      "Orchestrator.NATS.TLS.KeyFile. Empty: signed by the CA serve generates under DataDir/credentials/tls",
  ),
  "Orchestrator.NATS.TLS.KeyFile": str("", "PEM private key of Orchestrator.NATS.TLS.CertFile"),
  "Orchestrator.NATS.TLS.Disable": bool(
    false,
    "The embedded nats-server speaks plain NATS: compute nodes', leaf servers' and readers' traffic crosses the " +
      "network in clear",
  ),
  "Orchestrator.NATS.TLS.CACert": str(
    "",
    "PEM CA certificate(s) the orchestrator trusts for NATS besides the system's: an external NATS's, or the " +
      "issuer of Orchestrator.NATS.TLS.CertFile (the generated certificate's CA is trusted without it)",
  ),
  "Orchestrator.NATS.TLS.ClientCertFile": str(
    "",
    "External NATS that verifies clients (mutual TLS): the orchestrator's PEM client certificate, with ClientKeyFile",
  ),
  "Orchestrator.NATS.TLS.ClientKeyFile": str("", "PEM private key of Orchestrator.NATS.TLS.ClientCertFile"),
  "Orchestrator.Cluster.Enabled": bool(
    false,
    "Run as one of several orchestrators sharing one KurrentDB (EventStore.URL) and one NATS cluster with JetStream " +
      "(Orchestrator.NATS.URL); SQLite and the embedded nats-server are refused in this mode",
  ),
  "Orchestrator.Cluster.Partitions": int(
    64,
    "Cluster mode: how many partitions the entities are split into (by a hash of their id); the same on every " +
      "orchestrator of the cluster, and never changed while it runs",
  ),
  "Orchestrator.Cluster.LeaseTTL": dur(
    15_000,
    "Cluster mode: how long a partition's or duty's lease lasts unless its owner renews it; a dead owner's " +
      "partitions are served again after about this long. At least 15s (a JetStream leader election takes seconds)",
  ),
  "Orchestrator.Cluster.Replicas": int(
    3,
    "Cluster mode: replicas of the lease key-value bucket and of SHOAL_EVENTS when it is created (at most the NATS " +
      "cluster's servers; 1 on a single server)",
  ),
  "Orchestrator.Auth.Token": secretStr(
    "The join token compute nodes present (Compute.Auth.Token). Empty: generated once under DataDir/credentials/join-token",
  ),
  "Orchestrator.NodeManager.ManualApproval": bool(
    false,
    "New compute nodes start PENDING and need `shoal node approve`",
  ),
  "Orchestrator.Scheduler.QueueBackoff": dur(
    60_000,
    "How often a Queued job is tried again (also at once when a node joins, is approved, recovers or frees capacity); 0: only then",
  ),
  "Orchestrator.Scheduler.ExecutionAnswerTimeout": dur(
    300_000,
    "How long a node may leave an execution's work unanswered (its bid, its start) while the orchestrator listens; " +
      "then the execution fails and is placed elsewhere. At least 1s",
  ),
  "Orchestrator.Scheduler.MaxExecutionsPerEval": int(
    20,
    "At most how many executions one evaluation of a job creates, and how many running executions of a job's " +
      "earlier versions it stops after an update; the rest an ExecutionLimitBackoff later. 0: no limit",
  ),
  "Orchestrator.Scheduler.ExecutionLimitBackoff": dur(
    100,
    "How long after an evaluation held back by MaxExecutionsPerEval the job is evaluated again for the rest; " +
      "more than 0 while MaxExecutionsPerEval is set, at most 1h",
  ),
  "Orchestrator.NodeManager.DisconnectTimeout": dur(60_000, "A node silent for longer than this becomes UNHEALTHY"),
  "Orchestrator.NodeManager.UnknownTimeout": dur(
    300_000,
    "A node silent for longer than this (from its last heartbeat) becomes UNKNOWN",
  ),
  "Orchestrator.NodeManager.Overrides": {
    kind: "overrides",
    default: [] as HealthOverride[],
    description:
      "Per-node (NodeIDs) or per-group (Selector) DisconnectTimeout/UnknownTimeout; node entries win over groups, first matching group wins",
  } as KeyDef<"overrides", HealthOverride[]>,
  "Orchestrator.NodeManager.MaxRegistrationsPerSecond": int(
    100,
    "New nodes (ids not currently registered) admitted per second, sustained, once RegistrationBurst is spent; " +
      "0 for no limit",
  ),
  "Orchestrator.NodeManager.RegistrationBurst": int(
    100_000,
    "New nodes admitted at once after a quiet spell: a whole fleet joining a new orchestrator " +
      "(at least 1 when MaxRegistrationsPerSecond is set)",
  ),
  "Orchestrator.NodeManager.MaxPendingNodes": int(
    1000,
    "With ManualApproval: nodes awaiting approval at most; more are refused until an operator acts. 0 for no limit",
  ),
  "Orchestrator.NodeManager.NodeEvictionRate": num(
    0.1,
    "Nodes per second whose work is moved off when they go silent (UNHEALTHY, UNKNOWN), while most of the fleet is healthy",
  ),
  "Orchestrator.NodeManager.SecondaryNodeEvictionRate": num(
    0.01,
    "Nodes per second whose work is moved once UnhealthyNodesThreshold of the fleet is silent (fleets above LargeClusterSizeThreshold; smaller ones pause)",
  ),
  "Orchestrator.NodeManager.UnhealthyNodesThreshold": num(
    0.55,
    "Share of the approved compute nodes (0–1) silent at once above which work moves at the secondary rate, or pauses",
  ),
  "Orchestrator.NodeManager.LargeClusterSizeThreshold": int(
    50,
    "Fleets of at most this many approved compute nodes pause moving work, instead of slowing, once UnhealthyNodesThreshold is reached",
  ),
  "Orchestrator.NodeManager.ReconnectLoginsPerSecond": int(
    500,
    "When the whole fleet reconnects at once (a restart, NATS back), nodes are asked to spread their reconnects so that about this many log in per second; the health grace grows by that spread. 0: no spread",
  ),
  "Orchestrator.Audit.CheckpointEvery": int(
    10_000,
    "A signed audit checkpoint once this many events were stored since the last one (or CheckpointInterval passed, whichever first). 0: by time only",
  ),
  "Orchestrator.Audit.CheckpointInterval": dur(
    60_000,
    "A signed audit checkpoint at least this often while events are stored. 0: by count only (both 0: none)",
  ),
  "JobDefaults.Batch.Priority": int(0, "Priority a batch job gets when its spec sets none (or 0)"),
  "JobDefaults.Batch.Task.Resources.CPU": str(
    "500m",
    "CPU a batch job's task gets when its spec sets none (cores or millicores, as Bacalhau)",
  ),
  "JobDefaults.Batch.Task.Resources.Memory": str(
    "512Mb",
    "Memory a batch job's task gets when its spec sets none (as Bacalhau: 512Mb, 1Gi, …)",
  ),
  "JobDefaults.Batch.Task.Timeouts.QueueTimeout": dur(
    0,
    "How long a batch job that cannot be placed waits (Queued) before it fails, when its spec sets none; 0: it fails at once",
  ),
  "JobDefaults.Batch.Task.Timeouts.ExecutionTimeout": dur(
    0,
    "How long an execution of a batch job may run, when its spec sets none; 0: no limit",
  ),
  "JobDefaults.Batch.Task.Timeouts.TotalTimeout": dur(
    0,
    "How long a batch job may take from submission, when its spec sets none; 0: no limit",
  ),
  "JobDefaults.Ops.Priority": int(0, "Priority an ops job gets when its spec sets none (or 0)"),
  "JobDefaults.Ops.Task.Resources.CPU": str(
    "500m",
    "CPU a ops job's task gets when its spec sets none (cores or millicores, as Bacalhau)",
  ),
  "JobDefaults.Ops.Task.Resources.Memory": str(
    "512Mb",
    "Memory a ops job's task gets when its spec sets none (as Bacalhau: 512Mb, 1Gi, …)",
  ),
  "JobDefaults.Ops.Task.Timeouts.QueueTimeout": dur(
    0,
    "How long a ops job that cannot be placed waits (Queued) before it fails, when its spec sets none; 0: it fails at once",
  ),
  "JobDefaults.Ops.Task.Timeouts.ExecutionTimeout": dur(
    0,
    "How long an execution of a ops job may run, when its spec sets none; 0: no limit",
  ),
  "JobDefaults.Ops.Task.Timeouts.TotalTimeout": dur(
    0,
    "How long a ops job may take from submission, when its spec sets none; 0: no limit",
  ),
  "JobDefaults.Service.Priority": int(0, "Priority a service job gets when its spec sets none (or 0)"),
  "JobDefaults.Service.Task.Resources.CPU": str(
    "500m",
    "CPU a service job's task gets when its spec sets none (cores or millicores, as Bacalhau)",
  ),
  "JobDefaults.Service.Task.Resources.Memory": str(
    "512Mb",
    "Memory a service job's task gets when its spec sets none (as Bacalhau: 512Mb, 1Gi, …)",
  ),
  "JobDefaults.Service.Task.Timeouts.QueueTimeout": dur(
    0,
    "How long a service job that cannot be placed waits (Queued) before it fails, when its spec sets none; 0: it fails at once",
  ),
  "JobDefaults.Daemon.Priority": int(0, "Priority a daemon job gets when its spec sets none (or 0)"),
  "JobDefaults.Daemon.Task.Resources.CPU": str(
    "500m",
    "CPU a daemon job's task gets when its spec sets none (cores or millicores, as Bacalhau)",
  ),
  "JobDefaults.Daemon.Task.Resources.Memory": str(
    "512Mb",
    "Memory a daemon job's task gets when its spec sets none (as Bacalhau: 512Mb, 1Gi, …)",
  ),
  "JobLimits.MaxCount": int(L.MaxCount, "Replicas a batch or service job may ask for (Count) at most"),
  "JobLimits.MaxEnvironmentVariables": int(L.MaxEnvironmentVariables, "Env entries (and EnvironmentVariables items)"),
  "JobLimits.MaxEnvValueLength": int(L.MaxEnvValueLength, "Characters of each Env value and EnvironmentVariables item"),
  "JobLimits.MaxEntrypointItems": int(L.MaxEntrypointItems, "Items of a task's docker Entrypoint, at most"),
  "JobLimits.MaxParameters": int(L.MaxParameters, "Items of a task's docker Parameters, at most"),
  "JobLimits.MaxArgumentLength": int(L.MaxArgumentLength, "Characters of each Entrypoint and Parameters item, at most"),
  "JobLimits.MaxImageLength": int(L.MaxImageLength, "Characters of a task's docker Image reference, at most"),
  "JobLimits.MaxWorkingDirectoryLength": int(L.MaxWorkingDirectoryLength, "Characters of a WorkingDirectory, at most"),
  "JobLimits.MaxNameLength": int(L.MaxNameLength, "Characters of a job's Name and of its task's Name, at most"),
  "JobLimits.MinMemory": bytes(L.MinMemory, "Memory a task may ask for, at least (Docker refuses less than 6MiB)"),
  "JobLimits.MaxCPU": int(L.MaxCPU, "CPU cores a task may ask for, at most: more than any node offers"),
  "JobLimits.MaxMemory": bytes(L.MaxMemory, "Memory a task may ask for, at most: more than any node offers"),
  "JobLimits.MaxGPU": int(L.MaxGPU, "GPUs a task may ask for, at most: more than any node offers"),
  "Orchestrator.Audit.AsOf.KeptStates": int(
    2,
    "Read models folded as of past moments kept per kind (nodes, jobs), so a later question folds on from one; at least 1",
  ),
  "Orchestrator.Audit.AsOf.Snapshots": int(
    20,
    "Node-state snapshots kept along the log, from which a node read model as of a past moment is folded; 0: none",
  ),
  "Orchestrator.Audit.AsOf.KeepFor": dur(
    300_000,
    "How long those kept read models stay after the last as-of question; 0: dropped once it is answered",
  ),
  "EventStore.URL": str("", "kurrentdb://… to use KurrentDB; empty uses the embedded SQLite store in DataDir"),
  "EventStore.SQLite.WriterThread": bool(
    false,
    "SQLite store: group commits (and their fsync) on a worker thread, off the event loop; worth it only with a core to spare",
  ),
  "EventStore.SQLite.ReadAhead": bool(
    true,
    "SQLite store: long replays (start-up recovery, a processor far behind) read the store on a reader thread while the event loop folds",
  ),
  "Compute.Orchestrators": {
    kind: "list",
    default: ["nats://127.0.0.1:4222"],
    description: "NATS URLs of the orchestrator(s)",
  } as KeyDef<"list", string[]>,
  "Compute.Auth.Token": secretStr(
    "The orchestrator's join token; used once to join, after which the node logs in with its own key",
  ),
  "Compute.TLS.CACert": str(
    "",
    "PEM CA certificate(s) the node trusts for the orchestrators' NATS besides the system's. Empty: on the " +
      "orchestrator's machine, the CA serve generated under DataDir when the server speaks TLS",
  ),
  "Compute.TLS.Insecure": bool(
    false,
    "Do not check the NATS server's certificate (still TLS): anyone on the way can pose as the orchestrator; " +
      "for tests only",
  ),
  "Compute.Heartbeat.Interval": dur(15_000, "How often heartbeats are sent"),
  "Compute.Heartbeat.InfoUpdateInterval": dur(
    60_000,
    "How often node information is reported (only changes are stored)",
  ),
  "Compute.Heartbeat.ResourceUpdateInterval": dur(
    30_000,
    "How often resource availability is reported (kept in memory)",
  ),
  "Compute.AllocatedCapacity.CPU": str(
    "70%",
    "CPU the node offers executions: a share of this machine's cores (70%), or cores or millicores (2, 1500m)",
  ),
  "Compute.AllocatedCapacity.Memory": str(
    "70%",
    "Memory the node offers executions: a share of this machine's memory (70%), or a size (4Gb, 2Gi)",
  ),
  "Compute.Docker.AllowPull": bool(
    false,
    "Pull an image the Docker engine does not have; otherwise such an execution fails (image missing)",
  ),
  "Compute.Docker.AllowedNetworks": {
    kind: "list",
    default: [] as string[],
    description: "Networks executions may ask for besides None: Host, Full",
  } as KeyDef<"list", string[]>,
  "Compute.Docker.MaxOutputBytes": bytes(
    1024 * 1024,
    "Bytes of stdout and of stderr kept per execution (each); the rest is counted, and the truncation said",
  ),
  "Compute.Publishers.MaxResultBytes": bytes(
    DEFAULT_MAX_RESULT_BYTES,
    "Bytes an execution's results (its result paths, stdout, stderr) may hold before the local publisher " +
      "archives them; more fails the execution, naming this limit",
  ),
  "Compute.Publishers.Local.RetentionPeriod": dur(
    DEFAULT_RESULT_RETENTION.periodMs,
    "How long the node keeps a published result archive before removing it; 0s: no age limit, at least 1m otherwise",
  ),
  "Compute.Publishers.Local.MaxTotalBytes": bytes(
    DEFAULT_RESULT_RETENTION.maxTotalBytes,
    "The most the node's published result archives may hold in all; beyond it the oldest are removed. 0: no limit; " +
      "otherwise at least Compute.Publishers.MaxResultBytes",
  ),
  "Compute.Docker.StopGracePeriod": dur(10_000, "How long a cancelled container gets between SIGTERM and SIGKILL"),
  "Compute.Docker.PidsLimit": int(
    DEFAULT_PIDS_LIMIT,
    "Processes and threads each container may hold at once (a fork bomb stops there); at least 1",
  ),
  "Compute.Docker.Capabilities": {
    kind: "list",
    default: [...DEFAULT_CAPABILITIES],
    description: "Linux capabilities each container keeps, all others dropped: any of Docker's default set",
  } as KeyDef<"list", string[]>,
  "Compute.Docker.ReadOnlyRootFilesystem": bool(
    false,
    "Run containers with the image's filesystem read-only and a writable tmpfs at /tmp",
  ),
  "Compute.AllowListedLocalPaths": {
    kind: "list",
    default: [] as string[],
    description:
      "Host paths executions may mount as localDirectory inputs: patterns (*, **, ?, [ab], {a,b}), each with :rw " +
      "to allow writing (else read-only); empty: the node reads no local directories",
  } as KeyDef<"list", string[]>,
  "InputSources.ReadTimeout": dur(300_000, "How long a compute node's urlDownload of one input may take"),
  "InputSources.MaxDownloadSize": bytes(
    1024 * 1024 * 1024,
    "The largest file a compute node downloads for one urlDownload input; a larger one fails the execution",
  ),
  "Compute.Metrics.Port": int(
    0,
    "Port the compute node serves GET /metrics on (Prometheus text; open to anyone who reaches it unless " +
      "Compute.Metrics.BearerToken or BearerTokenFile is set); 0: it serves none",
  ),
  "Compute.Metrics.Host": str("0.0.0.0", "Address the compute node's /metrics listens on (with Compute.Metrics.Port)"),
  "Compute.Metrics.BearerToken": secretStr(
    "A token scrapers of the compute node's /metrics must send as Authorization: Bearer <token> (Prometheus: " +
      "authorization.credentials); instead of BearerTokenFile",
  ),
  "Compute.Metrics.BearerTokenFile": str(
    "",
    "A file holding Compute.Metrics.BearerToken (surrounding whitespace ignored), read at start, so the token is " +
      "not in the config",
  ),
  "Logging.Level": str("info", "trace, debug, info, warn, error or fatal"),
  "Logging.Mode": str("default", "default (human readable) or json"),
} as const;

export type ConfigKey = keyof typeof CONFIG_KEYS;
export type ShoalConfig = { -readonly [K in ConfigKey]: (typeof CONFIG_KEYS)[K]["default"] };

export function defaultConfig(): ShoalConfig {
  const out: Record<string, unknown> = {};
  for (const [key, def] of Object.entries(CONFIG_KEYS)) out[key] = structuredClone(def.default);
  return out as ShoalConfig;
}

export function isConfigKey(key: string): key is ConfigKey {
  return Object.prototype.hasOwnProperty.call(CONFIG_KEYS, key);
}

/** Config keys are case-insensitive on input (env vars are upper case); this finds the canonical spelling. */
export function canonicalKey(key: string): ConfigKey | undefined {
  const lower = key.toLowerCase();
  return (Object.keys(CONFIG_KEYS) as ConfigKey[]).find((k) => k.toLowerCase() === lower);
}

/**
 * A key's value as text, in the form `-c Key=Value` takes: durations and sizes in their units, lists joined with
 * commas, labels as k=v, structured values as JSON.
 */
export function configValueText(key: ConfigKey, value: unknown): string {
  const kind = CONFIG_KEYS[key].kind;
  if (kind === "duration") return formatDuration(value as number);
  if (kind === "bytes") return formatExactBytes(value as number);
  if (kind === "labels")
    return Object.entries(value as Record<string, string>)
      .map(([k, v]) => `${k}=${v}`)
      .join(",");
  if (kind === "list") return (value as string[]).join(",");
  if (kind === "overrides" || kind === "users") return JSON.stringify(configFileValue(key, value));
  return String(value);
}

/** A key's value as a YAML config file writes it: durations and sizes in their units (`1m`, `1GiB`), the rest as is. */
export function configFileValue(key: ConfigKey, value: unknown): unknown {
  const kind = CONFIG_KEYS[key].kind;
  if (kind === "duration" || kind === "bytes") return configValueText(key, value);
  if (kind !== "overrides") return value;
  return (value as HealthOverride[]).map((o) => ({
    ...o,
    ...(o.DisconnectTimeout === undefined ? {} : { DisconnectTimeout: formatDuration(o.DisconnectTimeout) }),
    ...(o.UnknownTimeout === undefined ? {} : { UnknownTimeout: formatDuration(o.UnknownTimeout) }),
  }));
}
