import Docker from "dockerode";
import type { Logger } from "pino";
import { formatExactBytes } from "../../config/byte-size.ts";
import { formatDuration } from "../../config/duration.ts";
import { badRequest, conflict, forbidden, notFound, type ShoalError, unavailable } from "../../errors/shoal-error.ts";
import type { ExecutionInputs } from "../inputs/execution-inputs.ts";
import { BoundedOutput } from "./bounded-output.ts";
import { type DeadlineTimer, deadlineTimer } from "./deadline-timer.ts";
import { CapacityLedger } from "./capacity-ledger.ts";
import { type ContainerConfinement, confinementProblem, DEFAULT_CONFINEMENT } from "./container-confinement.ts";
import { dockerContainerDetails } from "./docker-container-details.ts";
import { dockerContainerOptions } from "./docker-container-options.ts";
import {
  dockerError,
  dockerMessage,
  isDockerAlreadyStopped,
  isDockerContainerGone,
  isDockerNotFound,
} from "./docker-error.ts";
import { dockerFrames } from "./docker-frames.ts";
import { followDockerLog } from "./docker-log-follow.ts";
import { sawOomEvent } from "./docker-oom-event.ts";
import { dockerLogStream } from "./docker-log-stream.ts";
import {
  EXECUTION_LABEL,
  executionIdProblem,
  labelledResources,
  labelledTimeoutMs,
  NODE_LABEL,
  OWNER_LABEL,
} from "./docker-labels.ts";
import {
  type BindMount,
  type ExecutionEndReason,
  type ExecutionResources,
  type ExecutionResult,
  type ExecutionSpec,
  type Executor,
  type LogChunk,
  type LogOptions,
  NETWORK_TYPES,
  type NetworkType,
  type ReconcileReport,
  type RunningExecution,
} from "./executor.ts";

export interface DockerExecutorOptions {
  /** The compute node this executor runs for; its containers carry it as a label. */
  readonly nodeId: string;
  /**
   * The id of the node's DataDir (src/compute/container-owner.ts): its containers carry it, and reconcile touches no
   * container that carries another. Without one, the node id alone says whose a container is.
   */
  readonly owner?: string;
  /** What the node offers executions; it refuses work past it. */
  readonly capacity: ExecutionResources;
  readonly logger: Logger;
  /** Default: the engine at DOCKER_HOST, else /var/run/docker.sock. */
  readonly docker?: Docker;
  /** Networks executions may ask for besides None. Default: none. */
  readonly allowedNetworks?: readonly NetworkType[];
  /** Pull an image the engine does not have. Default false: a missing image fails the execution. */
  readonly allowPull?: boolean;
  /** Bytes of stdout and of stderr kept per execution (each); the rest is counted. Default 1 MiB. */
  readonly maxOutputBytes?: number;
  /** Seconds a cancelled container gets between SIGTERM and SIGKILL. Default 10. */
  readonly stopGraceSeconds?: number;
  /** How every container is confined (pids limit, capabilities, read-only root). Default DEFAULT_CONFINEMENT. */
  readonly confinement?: ContainerConfinement;
  /** Reads executions' input sources (localDirectory, urlDownload). Default: none; work with inputs is refused. */
  readonly inputs?: ExecutionInputs;
}

/**
 * How often, and how far apart, an unexplained SIGKILL exit is looked at again for an OOM kill (the flag, or the
 * engine's `oom` event): up to 3 s, as containerd's OOM event was seen to trail the exit on a loaded machine, and a
 * kill the kernel made for memory must not be reported as an ordinary exit.
 */
const OOM_RECHECKS = 30;
const OOM_RECHECK_MS = 100;
/**
 * How long the capture may trail the container's exit before what it has is taken as all, and
 * how long log followers get to catch up before the container (and its log) is removed.
 */
const DRAIN_MS = 5_000;

/** The head of a container's stdout and stderr, fed from its attached stream or its log. */
interface Captured {
  readonly stdout: BoundedOutput;
  readonly stderr: BoundedOutput;
}

async function capture(stream: NodeJS.ReadableStream, into: Captured): Promise<void> {
  for await (const chunk of dockerFrames(stream as AsyncIterable<Buffer>)) into[chunk.stream].push(chunk.data);
}

interface Tracked {
  readonly executionId: string;
  readonly resources: ExecutionResources;
  /** Ends every engine request of this execution: on close(), and when the capture must stop. */
  readonly abort: AbortController;
  container?: Docker.Container;
  /** Who ended the execution before its command did. */
  endedBy?: "timeout" | "cancelled";
  /** Ends the download of its inputs, while one is under way (a cancel does not wait for it). */
  stopInputs?: () => void;
  cancelReason?: string;
  timer?: DeadlineTimer;
  /** The kill at the deadline, in flight: its answer says whether the container was still running. */
  killing?: Promise<void>;
  /** Log followers that have not yet re-read the log after the end; removal waits for them (a while). */
  readonly followers: Set<Promise<void>>;
  readonly started: Promise<boolean>;
  readonly markStarted: (started: boolean) => void;
  /** The limits its container was created with (or, adopted, found with). */
  details?: Readonly<Record<string, string>>;
  /** Settles with the result, or undefined when the executor closed first. */
  outcome?: Promise<ExecutionResult | undefined>;
}

/**
 * Runs executions as Docker containers through dockerode: finds (or, when allowed, pulls) the
 * image, creates a labelled container with the execution's CPU and memory limits and network,
 * enforces its timeout, keeps the head of its stdout and stderr, and removes the container once
 * its result is taken. A restarted node reconciles what the engine still holds.
 */
export class DockerExecutor implements Executor {
  readonly engine = "docker";
  readonly ledger: CapacityLedger;
  readonly #docker: Docker;
  readonly #tracked = new Map<string, Tracked>();
  readonly #allowedNetworks: ReadonlySet<NetworkType>;
  readonly #maxOutputBytes: number;
  readonly #stopGraceSeconds: number;
  readonly #confinement: ContainerConfinement;
  #closed = false;

  constructor(private readonly options: DockerExecutorOptions) {
    this.#docker = options.docker ?? new Docker();
    this.ledger = new CapacityLedger(options.nodeId, options.capacity);
    this.#allowedNetworks = new Set<NetworkType>(["None", ...(options.allowedNetworks ?? [])]);
    this.#maxOutputBytes = options.maxOutputBytes ?? 1024 * 1024;
    this.#stopGraceSeconds = options.stopGraceSeconds ?? 10;
    this.#confinement = options.confinement ?? DEFAULT_CONFINEMENT;
    const problem = confinementProblem(this.#confinement);
    if (problem !== undefined) {
      throw new Error(`the Docker executor of node ${options.nodeId} cannot confine containers so: ${problem}`);
    }
  }

  get #nodeId(): string {
    return this.options.nodeId;
  }

  /** The storage types it reads inputs from (the node's StorageSources). */
  get storageSources(): readonly string[] {
    return this.options.inputs?.storageSources ?? [];
  }

  refusal(spec: ExecutionSpec): ShoalError | undefined {
    if (this.#closed) return unavailable(`the executor of node ${this.#nodeId} is closed (the node is stopping)`);
    const badId = executionIdProblem(spec.executionId);
    if (badId) return badId;
    if (this.#tracked.has(spec.executionId))
      return conflict(`execution ${spec.executionId} already runs on node ${this.#nodeId}`);
    if (typeof spec.image !== "string" || spec.image.trim() === "")
      return badRequest(`execution ${spec.executionId} names no image`);
    const network = spec.network ?? "None";
    if (!NETWORK_TYPES.includes(network))
      return badRequest(
        `execution ${spec.executionId} asks for network ${JSON.stringify(network)}; known: ${NETWORK_TYPES.join(", ")}`,
      );
    if (network === "HTTP")
      return badRequest(
        `execution ${spec.executionId} asks for network HTTP, which the Docker executor does not offer`,
      );
    if (!this.#allowedNetworks.has(network)) {
      return forbidden(
        `node ${this.#nodeId} does not allow network ${network} (it allows ${[...this.#allowedNetworks].join(", ")})`,
      );
    }
    const timeoutMs = spec.timeoutMs ?? 0;
    if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 0)
      return badRequest(
        `execution ${spec.executionId} has timeout ${String(timeoutMs)}: a whole number of milliseconds, 0 for none`,
      );
    const badEnv = Object.keys(spec.env ?? {}).find((k) => k === "" || k.includes("="));
    if (badEnv !== undefined)
      return badRequest(
        `execution ${spec.executionId} has environment variable name ${JSON.stringify(badEnv)}: names are not empty and hold no '='`,
      );
    const inputs = this.#inputsRefusal(spec);
    if (inputs) return inputs;
    return this.ledger.refusal(spec.executionId, spec.resources);
  }

  #inputsRefusal(spec: ExecutionSpec): ShoalError | undefined {
    if ((spec.inputs ?? []).length === 0) return undefined;
    if (this.options.inputs === undefined)
      return badRequest(`execution ${spec.executionId} has input sources, and node ${this.#nodeId} reads none`);
    return this.options.inputs.refusal(spec);
  }

  async bidRefusal(spec: ExecutionSpec): Promise<ShoalError | undefined> {
    const refused = this.refusal(spec);
    // A node that pulls may still fail the pull at run time; one that does not can say now.
    if (refused !== undefined || this.options.allowPull) return refused;
    try {
      await this.#docker.getImage(spec.image).inspect();
      return undefined;
    } catch (e) {
      if (isDockerNotFound(e)) return this.#imageMissing(spec.image);
      return unavailable(
        `node ${this.#nodeId} cannot reach its Docker engine to check image ${spec.image}: ${e instanceof Error ? e.message : String(e)}`,
      );
    }
  }

  async run(spec: ExecutionSpec): Promise<RunningExecution> {
    const refused = this.refusal(spec);
    if (refused) throw refused;
    this.ledger.reserve(spec.executionId, spec.resources);
    const tracked = this.#track(spec.executionId, spec.resources);
    tracked.outcome = this.#execute(tracked, spec);
    return this.#handle(tracked);
  }

  async cancel(executionId: string, reason?: string): Promise<ExecutionResult> {
    const tracked = this.#tracked.get(executionId);
    if (!tracked?.outcome) throw notFound(`execution ${executionId} does not run on node ${this.#nodeId}`);
    tracked.endedBy ??= "cancelled";
    if (reason !== undefined) tracked.cancelReason ??= reason;
    tracked.stopInputs?.();
    if (tracked.container) await this.#stop(tracked.container, executionId);
    // Before its container exists, #execute sees endedBy and stops short.
    const result = await tracked.outcome;
    if (!result)
      throw conflict(`the executor of node ${this.#nodeId} closed while execution ${executionId} was being cancelled`);
    return result;
  }

  async *logs(executionId: string, options: LogOptions = {}): AsyncGenerator<LogChunk> {
    const tracked = this.#tracked.get(executionId);
    if (!tracked) throw notFound(`execution ${executionId} does not run on node ${this.#nodeId}`);
    const follow = options.follow ?? false;
    // Accepted but not yet created: a follower waits for the container; a reader finds nothing yet.
    if (!tracked.container && (!follow || !(await tracked.started))) return;
    const container = tracked.container;
    if (!container) return;
    let reread = () => {};
    const rereadDone = new Promise<void>((resolve) => (reread = resolve));
    if (follow) tracked.followers.add(rereadDone);
    let source: AsyncIterable<LogChunk>;
    try {
      if (follow) {
        source = followDockerLog(this.#docker, container.id, options.signal, reread);
      } else {
        const stream = await dockerLogStream(this.#docker, container.id, {
          follow: false,
          ...(options.signal ? { abortSignal: options.signal } : {}),
        });
        source = dockerFrames(stream as AsyncIterable<Buffer>);
      }
      yield* source;
    } catch (e) {
      if (options.signal?.aborted) return;
      // The container was removed (or is being removed) in between: the execution ended and its output is in its
      // result.
      if (isDockerContainerGone(e)) throw notFound(`execution ${executionId} no longer runs on node ${this.#nodeId}`);
      throw dockerError(e, `reading the logs of execution ${executionId}`);
    } finally {
      reread();
      tracked.followers.delete(rereadDone);
    }
  }

  running(): readonly string[] {
    return [...this.#tracked.keys()];
  }

  async reconcile(known: Iterable<string>): Promise<ReconcileReport> {
    if (this.#closed) throw unavailable(`the executor of node ${this.#nodeId} is closed (the node is stopping)`);
    const knownIds = new Set(known);
    let found: Docker.ContainerInfo[];
    try {
      found = await this.#docker.listContainers({ all: true, filters: { label: [`${NODE_LABEL}=${this.#nodeId}`] } });
    } catch (e) {
      throw dockerError(e, `listing the containers of node ${this.#nodeId}`);
    }
    const adopted: ReconcileReport["adopted"][number][] = [];
    const removed: ReconcileReport["removed"][number][] = [];
    const failed: ReconcileReport["failed"][number][] = [];
    const seen = new Set<string>();
    for (const info of found) {
      const executionId = info.Labels[EXECUTION_LABEL];
      const owner = info.Labels[OWNER_LABEL];
      // Another node's with the same id (another DataDir on this engine): not ours to adopt, remove or count.
      if (owner !== undefined && owner !== this.options.owner) continue;
      // Made before containers carried their owner: ours only when this node's own record says it ran it.
      if (owner === undefined && this.options.owner !== undefined && !knownIds.has(executionId ?? "")) {
        this.options.logger.info(
          { executionId, containerId: info.Id },
          "left alone a container without an owner label: it may be another node's with the same id",
        );
        continue;
      }
      const wasRunning = info.State === "running";
      // Created but never started (the node stopped in between): the execution never ran, so it
      // is removed and counts as missing, not as a command that exited.
      const neverStarted = info.State === "created";
      if (executionId !== undefined && !neverStarted) seen.add(executionId);
      // Already watched by this executor (reconcile called while it runs): nothing to do.
      if (executionId !== undefined && this.#tracked.has(executionId)) continue;
      if (executionId !== undefined && knownIds.has(executionId) && !neverStarted && !executionIdProblem(executionId)) {
        const container = this.#docker.getContainer(info.Id);
        const resources = labelledResources(info.Labels);
        this.ledger.adopt(executionId, resources);
        const tracked = this.#track(executionId, resources);
        tracked.container = container;
        tracked.outcome = this.#adopt(tracked, container, labelledTimeoutMs(info.Labels));
        adopted.push({ execution: this.#handle(tracked), containerId: info.Id, wasRunning });
        this.options.logger.info(
          { executionId, containerId: info.Id, wasRunning },
          "adopted the container of an execution this node still runs",
        );
        continue;
      }
      try {
        await this.#docker.getContainer(info.Id).remove({ force: true, v: true });
        removed.push({ containerId: info.Id, ...(executionId !== undefined ? { executionId } : {}), wasRunning });
        this.options.logger.info(
          { executionId, containerId: info.Id, wasRunning },
          "removed a container of an execution this node no longer runs",
        );
      } catch (e) {
        if (isDockerNotFound(e)) continue;
        const error = dockerError(e, `removing container ${info.Id}`);
        failed.push({ containerId: info.Id, error });
        this.options.logger.warn(
          { executionId, containerId: info.Id, reason: error.message },
          "could not remove a container this node no longer runs",
        );
      }
    }
    const missing = [...knownIds].filter((id) => !seen.has(id) && !this.#tracked.has(id));
    // Downloads of executions that ended while the node was away: only running containers still read theirs.
    await this.options.inputs
      ?.prune(new Set(this.#tracked.keys()))
      .catch((e: unknown) =>
        this.options.logger.warn({ reason: (e as Error).message }, "could not remove downloads of ended executions"),
      );
    return { adopted, removed, missing, failed };
  }

  async close(): Promise<void> {
    this.#closed = true;
    const pending: Promise<unknown>[] = [];
    for (const tracked of this.#tracked.values()) {
      tracked.timer?.cancel();
      tracked.abort.abort();
      if (tracked.outcome) pending.push(tracked.outcome);
    }
    await Promise.all(pending);
  }

  #track(executionId: string, resources: ExecutionResources): Tracked {
    let markStarted: (started: boolean) => void = () => {};
    const started = new Promise<boolean>((resolve) => (markStarted = resolve));
    const tracked: Tracked = {
      executionId,
      resources,
      abort: new AbortController(),
      followers: new Set(),
      started,
      markStarted,
    };
    this.#tracked.set(executionId, tracked);
    return tracked;
  }

  #handle(tracked: Tracked): RunningExecution {
    const outcome = tracked.outcome as Promise<ExecutionResult | undefined>;
    const done = new Promise<ExecutionResult>((resolve) => {
      void outcome.then((result) => {
        // Closed first: the container runs on, and the next reconcile adopts it.
        if (result) resolve(result);
      });
    });
    return {
      executionId: tracked.executionId,
      started: tracked.started,
      done,
      get details() {
        return tracked.details ?? {};
      },
    };
  }

  /** The whole life of a new execution; never rejects. */
  async #execute(tracked: Tracked, spec: ExecutionSpec): Promise<ExecutionResult | undefined> {
    const { executionId } = spec;
    const signal = tracked.abort.signal;
    try {
      const missing = await this.#ensureImage(spec.image, signal);
      if (this.#closed) return undefined;
      if (missing) return this.#endBeforeStart(tracked, "image-missing", missing);
      if (tracked.endedBy) return this.#endBeforeStart(tracked, "cancelled");
      const noBridge = spec.network === "Full" ? await this.#bridgeMissing() : undefined;
      if (noBridge) return this.#endBeforeStart(tracked, "rejected-by-engine", noBridge);
      let mounts: readonly BindMount[] = [];
      if (this.options.inputs !== undefined && (spec.inputs ?? []).length > 0) {
        const stop = new AbortController();
        tracked.stopInputs = () => stop.abort();
        const prepared = await this.options.inputs.prepare(spec, AbortSignal.any([signal, stop.signal]));
        tracked.stopInputs = undefined;
        if (this.#closed) return undefined;
        if (tracked.endedBy) return this.#endBeforeStart(tracked, "cancelled");
        if ("error" in prepared) return this.#endBeforeStart(tracked, "input-failed", prepared.error);
        mounts = prepared.mounts;
      }

      const options = dockerContainerOptions(
        this.#nodeId,
        this.options.owner,
        spec,
        this.#maxOutputBytes,
        this.#confinement,
        mounts,
      );
      let container: Docker.Container;
      try {
        const create = { ...options, abortSignal: signal } as Docker.ContainerCreateOptions;
        container = await this.#docker.createContainer(create);
      } catch (e) {
        if (this.#closed) return undefined;
        const error = dockerError(e, `creating the container of execution ${executionId}`);
        return this.#endBeforeStart(
          tracked,
          error.kind === "BadRequest" || error.kind === "Conflict" ? "rejected-by-engine" : "engine-failed",
          error,
        );
      }
      tracked.container = container;
      tracked.details = dockerContainerDetails(options.HostConfig ?? {});
      if (tracked.endedBy) {
        await this.#remove(container, executionId);
        return this.#endBeforeStart(tracked, "cancelled");
      }
      // Attached before it starts, the capture misses nothing, and it is whole when the container
      // exits (a follow of the log is not: see followDockerLog).
      const output: Captured = {
        stdout: new BoundedOutput(this.#maxOutputBytes),
        stderr: new BoundedOutput(this.#maxOutputBytes),
      };
      let attached: NodeJS.ReadableStream & { destroy?: () => void };
      try {
        attached = (await container.attach({
          stream: true,
          stdout: true,
          stderr: true,
          abortSignal: signal,
        })) as NodeJS.ReadableStream;
      } catch (e) {
        if (this.#closed) return undefined;
        await this.#remove(container, executionId);
        return this.#endBeforeStart(
          tracked,
          "engine-failed",
          dockerError(e, `attaching to the container of execution ${executionId}`),
        );
      }
      const captured = capture(attached, output).catch((e: unknown) => {
        if (!signal.aborted)
          this.options.logger.warn(
            { executionId, reason: dockerMessage(e) },
            "capturing the output of an execution failed; its result holds what was read",
          );
      });
      try {
        await container.start({ abortSignal: signal });
      } catch (e) {
        attached.destroy?.();
        if (this.#closed) return undefined;
        const error = dockerError(e, `starting the container of execution ${executionId}`);
        await this.#remove(container, executionId);
        return this.#endBeforeStart(
          tracked,
          error.kind === "BadRequest" ? "rejected-by-engine" : "engine-failed",
          error,
        );
      }
      tracked.markStarted(true);
      this.options.logger.info({ executionId, containerId: container.id, image: spec.image }, "execution started");
      // A cancel that came while the container was starting.
      if (tracked.endedBy) await this.#stop(container, executionId);
      return await this.#watch(tracked, container, spec.timeoutMs ?? 0, Date.now(), output, async () => {
        const drain = setTimeout(() => attached.destroy?.(), DRAIN_MS);
        await captured;
        clearTimeout(drain);
      });
    } catch (e) {
      if (this.#closed) return undefined;
      return this.#endBeforeStart(tracked, "engine-failed", dockerError(e, `running execution ${executionId}`));
    }
  }

  /** A container found after a restart: watched from where it is, its timeout counted from its start. */
  async #adopt(tracked: Tracked, container: Docker.Container, timeoutMs: number): Promise<ExecutionResult | undefined> {
    try {
      const inspected = await container.inspect({ abortSignal: tracked.abort.signal });
      const state = inspected.State;
      tracked.details = dockerContainerDetails(inspected.HostConfig);
      tracked.markStarted(true);
      // One that ended while the node was away ended on its own, whatever the time now.
      if (!state.Running) timeoutMs = 0;
      const startedAt = Date.parse(state.StartedAt);
      const output: Captured = {
        stdout: new BoundedOutput(this.#maxOutputBytes),
        stderr: new BoundedOutput(this.#maxOutputBytes),
      };
      // What it wrote before the adoption is only in its log: read the whole log once it has ended
      // (the engine keeps it to 2 × its max-size, see dockerContainerOptions).
      const readLog = async () => {
        try {
          await capture(
            await dockerLogStream(this.#docker, container.id, { follow: false, abortSignal: tracked.abort.signal }),
            output,
          );
        } catch (e) {
          if (!this.#closed)
            this.options.logger.warn(
              { executionId: tracked.executionId, reason: dockerMessage(e) },
              "reading the log of an adopted execution failed; its result holds what was read",
            );
        }
      };
      return await this.#watch(
        tracked,
        container,
        timeoutMs,
        Number.isFinite(startedAt) ? startedAt : Date.now(),
        output,
        readLog,
      );
    } catch (e) {
      if (this.#closed) return undefined;
      return this.#endBeforeStart(
        tracked,
        "engine-failed",
        dockerError(e, `adopting the container of execution ${tracked.executionId}`),
      );
    }
  }

  /**
   * An engine started with `--bridge=none` still accepts network mode `bridge`, and gives the
   * container no interface but `lo`: an execution that asked for the network must not run so.
   */
  async #bridgeMissing(): Promise<ShoalError | undefined> {
    try {
      await this.#docker.getNetwork("bridge").inspect();
      return undefined;
    } catch (e) {
      if (!isDockerNotFound(e)) throw e;
      return badRequest(
        `network Full needs the Docker engine's bridge network, and the engine of node ${this.#nodeId} has none (started with --bridge=none?)`,
      );
    }
  }

  #imageMissing(image: string): ShoalError {
    return notFound(`image ${image} is not on node ${this.#nodeId}, and this node does not pull images`);
  }

  /** Returns the reason the image cannot be had, or undefined once the engine has it. */
  async #ensureImage(image: string, signal: AbortSignal): Promise<ShoalError | undefined> {
    try {
      await this.#docker.getImage(image).inspect();
      return undefined;
    } catch (e) {
      if (!isDockerNotFound(e)) throw e;
    }
    if (!this.options.allowPull) {
      return this.#imageMissing(image);
    }
    this.options.logger.info({ image }, "pulling an image the engine does not have");
    try {
      const stream = await this.#docker.pull(image, { abortSignal: signal });
      await new Promise<void>((resolve, reject) =>
        this.#docker.modem.followProgress(stream, (err: Error | null) => (err ? reject(err) : resolve())),
      );
      return undefined;
    } catch (e) {
      if (this.#closed) throw e;
      return notFound(`image ${image} is not on node ${this.#nodeId}, and pulling it failed: ${dockerMessage(e)}`);
    }
  }

  /**
   * Follows the running container to its end, kills it at its deadline, completes the output
   * (`finishOutput`, once it has exited) and takes its result.
   */
  async #watch(
    tracked: Tracked,
    container: Docker.Container,
    timeoutMs: number,
    startedAtMs: number,
    output: Captured,
    finishOutput: () => Promise<void>,
  ): Promise<ExecutionResult | undefined> {
    const { executionId } = tracked;
    const signal = tracked.abort.signal;
    const { stdout, stderr } = output;

    if (timeoutMs > 0) {
      const kill = () => {
        const claimed = tracked.endedBy === undefined;
        if (claimed) tracked.endedBy = "timeout";
        tracked.killing = container.kill().then(
          () => {},
          (e: unknown) => {
            // It had exited on its own just before its deadline: its end is its own.
            if (isDockerAlreadyStopped(e)) {
              if (claimed) tracked.endedBy = undefined;
            } else
              this.options.logger.warn(
                { executionId, reason: dockerMessage(e) },
                "killing a timed-out execution failed",
              );
          },
        );
      };
      tracked.timer = deadlineTimer(startedAtMs + timeoutMs, kill);
    }

    let engineFailure: ShoalError | undefined;
    try {
      await container.wait({ abortSignal: signal });
    } catch (e) {
      if (this.#closed) return undefined;
      engineFailure = dockerError(e, `waiting for execution ${executionId}`);
    } finally {
      tracked.timer?.cancel();
    }
    await tracked.killing;
    await finishOutput();
    if (this.#closed) return undefined;

    let state: Docker.ContainerInspectInfo["State"] | undefined;
    if (!engineFailure) {
      try {
        state = (await container.inspect({ abortSignal: signal })).State;
        // Docker records an OOM kill from containerd's OOM event, which can arrive after the exit
        // event on a loaded machine: a SIGKILL nobody here sent is looked at again, briefly.
        for (let i = 0; i < OOM_RECHECKS && !tracked.endedBy && state.ExitCode === 137 && !state.OOMKilled; i++) {
          if (await sawOomEvent(this.#docker, container.id, startedAtMs, signal)) state = { ...state, OOMKilled: true };
          else {
            await new Promise((resolve) => setTimeout(resolve, OOM_RECHECK_MS));
            state = (await container.inspect({ abortSignal: signal })).State;
          }
        }
      } catch (e) {
        if (this.#closed) return undefined;
        engineFailure = dockerError(e, `inspecting the container of execution ${executionId}`);
      }
    }
    if (tracked.followers.size > 0) {
      let drained: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all(tracked.followers),
        new Promise((resolve) => (drained = setTimeout(resolve, DRAIN_MS))),
      ]);
      clearTimeout(drained);
    }
    await this.#remove(container, executionId);

    const exitCode = state?.ExitCode ?? -1;
    let reason: ExecutionEndReason;
    let message = "";
    if (tracked.endedBy === "cancelled") {
      reason = "cancelled";
      message = `execution ${executionId} was cancelled${tracked.cancelReason ? `: ${tracked.cancelReason}` : ""}`;
    } else if (tracked.endedBy === "timeout") {
      reason = "timeout";
      message = `execution ${executionId} timed out: it ran past its ${formatDuration(timeoutMs)} timeout and was killed`;
    } else if (engineFailure) {
      reason = "engine-failed";
      message = engineFailure.message;
    } else if (state?.OOMKilled) {
      reason = "oom-killed";
      message = `execution ${executionId} ran out of memory: killed at its ${formatExactBytes(tracked.resources.memoryBytes)} memory limit`;
    } else {
      reason = "exited";
      if (exitCode !== 0) message = `execution ${executionId}: the command exited with code ${exitCode}`;
    }
    const result: ExecutionResult = {
      executionId,
      state: reason === "cancelled" ? "Cancelled" : reason === "exited" && exitCode === 0 ? "Completed" : "Failed",
      reason,
      runOutput: {
        STDOUT: stdout.text(),
        StdoutTruncated: stdout.truncated,
        STDERR: stderr.text(),
        StderrTruncated: stderr.truncated,
        ExitCode: exitCode,
        ErrorMsg: message,
      },
      stdoutBytes: stdout.totalBytes,
      stderrBytes: stderr.totalBytes,
      ...(engineFailure ? { error: engineFailure } : {}),
      ...(state?.StartedAt ? { startedAt: state.StartedAt } : {}),
      ...(state?.FinishedAt ? { finishedAt: state.FinishedAt } : {}),
    };
    this.#finish(tracked, result);
    return result;
  }

  #endBeforeStart(tracked: Tracked, reason: ExecutionEndReason, error?: ShoalError): ExecutionResult {
    const cancelled = reason === "cancelled";
    const message = cancelled
      ? `execution ${tracked.executionId} was cancelled before it started${tracked.cancelReason ? `: ${tracked.cancelReason}` : ""}`
      : (error?.message ?? "");
    const result: ExecutionResult = {
      executionId: tracked.executionId,
      state: cancelled ? "Cancelled" : "Failed",
      reason,
      runOutput: {
        STDOUT: "",
        StdoutTruncated: false,
        STDERR: "",
        StderrTruncated: false,
        ExitCode: -1,
        ErrorMsg: message,
      },
      stdoutBytes: 0,
      stderrBytes: 0,
      ...(error ? { error } : {}),
    };
    tracked.markStarted(false);
    this.#finish(tracked, result);
    return result;
  }

  #finish(tracked: Tracked, result: ExecutionResult): void {
    this.#tracked.delete(tracked.executionId);
    this.options.inputs
      ?.cleanup(tracked.executionId)
      .catch((e: unknown) =>
        this.options.logger.warn(
          { executionId: tracked.executionId, reason: (e as Error).message },
          "could not remove an execution's downloaded inputs",
        ),
      );
    this.ledger.release(tracked.executionId);
    const { runOutput } = result;
    this.options.logger.info(
      {
        executionId: tracked.executionId,
        state: result.state,
        reason: result.reason,
        exitCode: runOutput.ExitCode,
        stdoutBytes: result.stdoutBytes,
        stderrBytes: result.stderrBytes,
        ...(runOutput.StdoutTruncated || runOutput.StderrTruncated ? { truncatedTo: this.#maxOutputBytes } : {}),
        ...(runOutput.ErrorMsg ? { message: runOutput.ErrorMsg } : {}),
      },
      "execution ended",
    );
  }

  /** SIGTERM, then SIGKILL after the grace period; a container that already stopped is fine. */
  async #stop(container: Docker.Container, executionId: string): Promise<void> {
    try {
      await container.stop({ t: this.#stopGraceSeconds });
    } catch (e) {
      if (!isDockerAlreadyStopped(e))
        this.options.logger.warn(
          { executionId, reason: dockerMessage(e) },
          "stopping the container of a cancelled execution failed",
        );
    }
  }

  async #remove(container: Docker.Container, executionId: string): Promise<void> {
    try {
      await container.remove({ force: true, v: true });
    } catch (e) {
      // Left behind, it is found by the node's label and removed by the next reconcile.
      if (!isDockerNotFound(e))
        this.options.logger.warn(
          { executionId, containerId: container.id, reason: dockerMessage(e) },
          "removing the container of an execution failed",
        );
    }
  }
}
