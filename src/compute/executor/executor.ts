import type { ShoalError } from "../../errors/shoal-error.ts";

/**
 * Bacalhau's network types (models.Network). An executor runs `None` unless the execution asks
 * for another and the node allows it.
 */
export const NETWORK_TYPES = ["None", "Host", "Full", "HTTP"] as const;
export type NetworkType = (typeof NETWORK_TYPES)[number];

/** What an execution holds on its node while it runs: CPU in millicores, memory in bytes. */
export interface ExecutionResources {
  readonly cpuMillis: number;
  readonly memoryBytes: number;
}

/** Data an execution reads (Bacalhau's InputSource, as the work protocol carries it), mounted at `target`. */
export type ExecutionInput =
  | {
      readonly type: "localDirectory";
      readonly sourcePath: string;
      readonly readWrite: boolean;
      readonly target: string;
    }
  | { readonly type: "urlDownload"; readonly url: string; readonly target: string };

/** A path of the node bound into the container. */
export interface BindMount {
  readonly source: string;
  readonly target: string;
  readonly readOnly: boolean;
}

/** One execution as the compute node runs it: what the orchestrator's execution asks of the engine. */
export interface ExecutionSpec {
  /** `e-<uuid>`; the executor finds the execution's container again by it. */
  readonly executionId: string;
  readonly image: string;
  /** Replaces the image's entrypoint when given. */
  readonly entrypoint?: readonly string[];
  /** The command's arguments (the image's CMD when absent). */
  readonly parameters?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  readonly workingDir?: string;
  readonly resources: ExecutionResources;
  /** Default `None`. */
  readonly network?: NetworkType;
  /** Milliseconds from the start of the container; absent or 0: no limit. */
  readonly timeoutMs?: number;
  /** Mounted before the container starts (a download fetched by the node first). */
  readonly inputs?: readonly ExecutionInput[];
  /** The node's directories the container writes its result paths into (writable mounts). */
  readonly outputs?: readonly { readonly hostPath: string; readonly containerPath: string }[];
}

/**
 * Why an execution ended. `exited` is the command's own end (its exit code says how it went);
 * the others say who ended it.
 */
export type ExecutionEndReason =
  | "exited"
  | "timeout"
  | "oom-killed"
  | "cancelled"
  | "image-missing"
  | "input-failed"
  | "rejected-by-engine"
  | "engine-failed";

/** Bacalhau's RunCommandResult: the captured output of one execution, bounded. */
export interface RunOutput {
  readonly STDOUT: string;
  readonly StdoutTruncated: boolean;
  readonly STDERR: string;
  readonly StderrTruncated: boolean;
  /** -1 when the command never ran (image missing, refused by the engine). */
  readonly ExitCode: number;
  readonly ErrorMsg: string;
}

export interface ExecutionResult {
  readonly executionId: string;
  /** Completed: the command exited 0. Failed: anything else but a cancel. */
  readonly state: "Completed" | "Failed" | "Cancelled";
  readonly reason: ExecutionEndReason;
  readonly runOutput: RunOutput;
  /** Bytes each stream wrote in all (more than kept when truncated). */
  readonly stdoutBytes: number;
  readonly stderrBytes: number;
  /**
   * When the engine, not the command, failed the execution (image missing, refused by the
   * engine, engine failure): that failure in Shoal's closed set. Timeouts, OOM kills and
   * cancels are outcomes, said by `reason` and `runOutput.ErrorMsg`.
   */
  readonly error?: ShoalError;
  /** ISO times from the engine; absent when the container never started. */
  readonly startedAt?: string;
  readonly finishedAt?: string;
}

/** An execution the executor has accepted or adopted. Neither promise rejects. */
export interface RunningExecution {
  readonly executionId: string;
  /** True once its container runs; false when it ended before (missing image, refused, cancelled). */
  readonly started: Promise<boolean>;
  /** Its end, once; after `close()` it stays pending (the container keeps running for the next reconcile). */
  readonly done: Promise<ExecutionResult>;
  /**
   * The limits the engine runs it under (`HostConfig.PidsLimit`, `HostConfig.CapAdd`, …, as
   * strings), once `started` is true; empty before, and when it never started.
   */
  readonly details: Readonly<Record<string, string>>;
}

export interface LogChunk {
  readonly stream: "stdout" | "stderr";
  readonly data: Buffer;
}

export interface LogOptions {
  /** Keep streaming until the execution ends (else: what it wrote so far). */
  readonly follow?: boolean;
  /** Stops a follow early. */
  readonly signal?: AbortSignal;
}

/** What a restarted compute node found of its executions in the engine, and what it did. */
export interface ReconcileReport {
  /** Executions the node still knows whose containers were found: their results come through `execution.done`. */
  readonly adopted: readonly {
    readonly execution: RunningExecution;
    readonly containerId: string;
    readonly wasRunning: boolean;
  }[];
  /** Containers of this node that no known execution claims, or that never started, removed. */
  readonly removed: readonly {
    readonly containerId: string;
    readonly executionId?: string;
    readonly wasRunning: boolean;
  }[];
  /** Known executions with no container, or one that never started: the node does not run them. */
  readonly missing: readonly string[];
  /** Containers that could not be removed (the engine refused); they are found again next time. */
  readonly failed: readonly { readonly containerId: string; readonly error: ShoalError }[];
}

/**
 * The compute node's side of running executions on one engine. Docker is the first; another
 * engine implements the same contract.
 */
export interface Executor {
  readonly engine: string;
  /** The storage types it reads executions' inputs from (the node's StorageSources); absent: none. */
  readonly storageSources?: readonly string[];
  /**
   * Starts an execution. Rejects with a ShoalError, having started nothing and held nothing,
   * when the node refuses it (does not fit, network not allowed, invalid, already running);
   * once it resolves, every later failure (missing image, engine trouble) is in the result.
   */
  run(spec: ExecutionSpec): Promise<RunningExecution>;
  /** Why this node would refuse the execution now, or undefined when it would take it. */
  refusal(spec: ExecutionSpec): ShoalError | undefined;
  /**
   * The bid: `refusal`, and what only the engine can say (a missing image that this node will not
   * pull). Runs and holds nothing.
   */
  bidRefusal(spec: ExecutionSpec): Promise<ShoalError | undefined>;
  /** Stops and removes the execution's container; its result says Cancelled. NotFound when it does not run here. */
  cancel(executionId: string, reason?: string): Promise<ExecutionResult>;
  /** The execution's stdout/stderr from its start, live while it runs. NotFound when it does not run here. */
  logs(executionId: string, options?: LogOptions): AsyncIterable<LogChunk>;
  /** After a restart: adopt the containers of `known` executions, remove the rest, report the missing. */
  reconcile(known: Iterable<string>): Promise<ReconcileReport>;
  /** Executions running now. */
  running(): readonly string[];
  /** Stops watching (timers, engine requests) and leaves containers running for the next reconcile. */
  close(): Promise<void>;
}
