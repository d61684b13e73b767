import type { Logger } from "pino";
import { encodeWorkflowStep } from "../events/catalog/workflow-step-codec.ts";
import type { WorkflowStep } from "../events/catalog/workflow-steps.ts";
import type { CheckpointStore, EventStore, NewEvent, RecordedEvent } from "../events/store/event-store.ts";
import type { EventEnvelope } from "../projections/event-envelope.ts";
import type { Processor } from "../projections/processor.ts";
import { deterministicId } from "../events/store/deterministic-id.ts";
import { isTransientFailure } from "./transient-failure.ts";
import { workflowActor } from "./workflow-actor.ts";
import type { IssuedCommand, Workflow, WorkflowCommand, WorkflowHandler } from "./workflow.ts";
import { type WorkflowInput, workflowInputOf } from "./workflow-input.ts";
import { WorkflowStream } from "./workflow-stream.ts";

export const WORKFLOW_CATEGORY = "workflow";
/** The type of a step record; its schema is the catalog's (src/events/catalog/workflow-steps.ts). */
export { WORKFLOW_STEP_EVENT, type WorkflowStep } from "../events/catalog/workflow-steps.ts";

/** How many events of its stream the look for the steps stored reads at a time. */
const FOUND_PAGE = 1_000;

/** An input that calls for commands, and the commands. */
interface Step {
  readonly recorded: RecordedEvent;
  readonly commands: readonly WorkflowCommand[];
}

/**
 * Runs a workflow as a processor of the store. For every input event that calls for commands it
 * first appends one step to the workflow's own stream (`workflow-<name>`) — input, commands, their
 * ids, all derived from the input event's id — then hands the commands to their handlers, with
 * the input event as their cause. An auditor reads in the workflow's stream why every automatic action happened.
 *
 * Steps are appended with the stream's exact expected revision (WorkflowStream), never "any", and a step already
 * stored is never appended again: a restart replays from the checkpoint, and the host's first batch looks up the steps
 * stored after its first input (a step is always stored after its input), so a replayed step is found and not
 * appended; a batch delivered again skips the steps this host appended meanwhile. The commands, being idempotent,
 * change nothing the second time.
 *
 * Inputs with the same order key run strictly in batch order; with `concurrency` above 1, inputs of different keys run
 * at the same time, so their step records' appends are in flight together and share the store's group commit. Each
 * step stays its own single-event append: idempotent on its own however a replay cuts the lane's batches, where a
 * batch's steps merged into one append would overlap a stored one only in part after a restart, and be refused.
 */
export class WorkflowHost implements Processor {
  /** The processor's name, which keys its checkpoint: `workflow-<name>`, as stored checkpoints have it. */
  readonly name: string;
  private readonly concurrency: number;
  /** Inputs whose step finished (carried out, or its entity ended) in a batch that has not ended well yet. */
  private readonly doneSinceCheckpoint = new Set<string>();
  /** Steps (by id) this host appended in a batch that has not ended well yet. */
  private readonly recordedSinceCheckpoint = new Set<string>();
  /** Steps found stored when a replay began, and the store position of the newest of them. */
  private foundAtReplay: { readonly ids: Set<string>; readonly through: number } | undefined;
  /** The position of the last batch's last event that ended well; undefined before the first. */
  private handledThrough: number | undefined;
  private readonly steps: WorkflowStream;

  constructor(
    private readonly workflow: Workflow,
    private readonly options: {
      readonly store: EventStore;
      readonly checkpoints?: CheckpointStore;
      readonly handlers: Readonly<Record<string, WorkflowHandler>>;
      readonly logger: Logger;
      /**
       * Ends the entity a command was for (a job, an execution fails with `reason`), when its handler
       * failed for good: for that entity's data, not for a store or NATS that will be back. Without
       * it, every failure is tried again.
       */
      readonly endEntity?: (command: IssuedCommand, reason: string) => Promise<void>;
      /** How many order groups of a batch run at once; 1 (the default): one input after another. */
      readonly concurrency?: number;
      /**
       * Inputs with the same key run strictly in batch order (default: the input's stream). Inputs of one stream
       * always keep their order: a stream's later inputs in a batch join the group of its first.
       */
      readonly orderKey?: (input: WorkflowInput) => string;
      /** The workflow's stream, when something else records there too (node reactions); else the host's own. */
      readonly steps?: WorkflowStream;
    },
  ) {
    this.name = `workflow-${workflow.name}`;
    const stream = `${WORKFLOW_CATEGORY}-${workflow.name}`;
    if (options.steps !== undefined && options.steps.name !== stream)
      throw new Error(`workflow ${workflow.name} records its steps in ${stream}, not ${options.steps.name}`);
    this.steps = options.steps ?? new WorkflowStream(options.store, stream);
    const { concurrency = 1 } = options;
    if (!Number.isInteger(concurrency) || concurrency < 1)
      throw new Error(
        `concurrency of workflow ${workflow.name} must be a whole number of at least 1, not ${concurrency}`,
      );
    this.concurrency = concurrency;
  }

  get checkpoints(): CheckpointStore | undefined {
    return this.options.checkpoints;
  }

  async handle(batch: readonly EventEnvelope[]): Promise<void> {
    const first = batch[0]?.recorded.position;
    // The first batch (a start replays from the checkpoint), or one that goes back (the same host fed again).
    if (first !== undefined && (this.handledThrough === undefined || first <= this.handledThrough))
      this.foundAtReplay = await this.storedSince(first - 1);
    if (this.concurrency === 1) {
      for (const envelope of batch) {
        // Entities' events only: the workflows' own steps are inputs of nobody.
        const input = workflowInputOf(envelope);
        if (input === undefined) continue;
        const commands = this.workflow.react(input);
        if (commands.length > 0) await this.stepOnce(envelope.recorded, commands);
      }
    } else await this.runGroups(this.groupsOf(batch));
    // The whole batch is done: the checkpoint passes it, and nothing of it comes again.
    this.doneSinceCheckpoint.clear();
    this.recordedSinceCheckpoint.clear();
    const last = batch.at(-1)?.recorded.position;
    if (last !== undefined) this.handledThrough = last;
    // Every input whose step could be among those found is handled (each step is stored after its input).
    if (last !== undefined && this.foundAtReplay !== undefined && last >= this.foundAtReplay.through)
      this.foundAtReplay = undefined;
  }

  /**
   * Taken back from another holder of its duty (who recorded steps meanwhile, some of them for inputs still to come
   * here): as at a start, the next batch looks up the steps stored after it, and the stream's revision is read again.
   */
  restarted(): void {
    this.handledThrough = undefined;
    this.doneSinceCheckpoint.clear();
    this.recordedSinceCheckpoint.clear();
    this.steps.forgetRevision();
  }

  /** The ids of this workflow's stream's events stored after `after`, as of now, and the newest one's position. */
  private async storedSince(after: number): Promise<{ ids: Set<string>; through: number }> {
    const { store } = this.options;
    const head = await store.headPosition();
    const ids = new Set<string>();
    let through = after;
    for (let from = after; from < head;) {
      const page = await store.readFiltered(
        { streams: [this.steps.name] },
        { after: from, through: head, maxCount: FOUND_PAGE },
      );
      for (const e of page.events) {
        ids.add(e.id);
        through = Math.max(through, e.position);
      }
      from = page.scannedThrough;
    }
    return { ids, through };
  }

  /**
   * A step, unless this host already carried it out since the last batch that ended well: a batch delivered again
   * after a passing failure (however the lane cuts it) repeats only what did not finish. Idempotence covers a
   * restart; this spares the entities that ended and the commands that went out a second round meanwhile.
   */
  private async stepOnce(recorded: RecordedEvent, commands: readonly WorkflowCommand[]): Promise<void> {
    if (this.doneSinceCheckpoint.has(recorded.id)) return;
    await this.step(recorded, commands);
    this.doneSinceCheckpoint.add(recorded.id);
  }

  /** The batch's steps by order key, each group in batch order; groups in the order of their first input. */
  private groupsOf(batch: readonly EventEnvelope[]): Step[][] {
    const { orderKey = (input: WorkflowInput) => input.stream } = this.options;
    const groups = new Map<string, Step[]>();
    const keyOfStream = new Map<string, string>();
    for (const envelope of batch) {
      const input = workflowInputOf(envelope);
      if (input === undefined) continue;
      const commands = this.workflow.react(input);
      if (commands.length === 0) continue;
      // A key that changed within the batch (a read model caught up meanwhile) must not split a stream's inputs.
      let key = keyOfStream.get(input.stream);
      if (key === undefined) keyOfStream.set(input.stream, (key = orderKey(input)));
      const group = groups.get(key);
      const step = { recorded: envelope.recorded, commands };
      if (group === undefined) groups.set(key, [step]);
      else group.push(step);
    }
    return [...groups.values()];
  }

  /**
   * Runs the groups, at most `concurrency` at once, and resolves when every group has finished. A failure stops new
   * groups from starting and rejects once the groups in flight have settled: the lane delivers the batch again, and
   * nothing of this delivery runs on beside the next one.
   */
  private async runGroups(groups: readonly Step[][]): Promise<void> {
    let next = 0;
    let failure: { readonly err: unknown } | undefined;
    const worker = async (): Promise<void> => {
      while (failure === undefined && next < groups.length) {
        const group = groups[next++] as Step[];
        try {
          for (const { recorded, commands } of group) await this.stepOnce(recorded, commands);
        } catch (err) {
          failure ??= { err };
        }
      }
    };
    const workers: Promise<void>[] = [];
    for (let i = 0; i < Math.min(this.concurrency, groups.length); i++) workers.push(worker());
    await Promise.all(workers);
    if (failure !== undefined) throw failure.err;
  }

  private async step(recorded: RecordedEvent, commands: readonly WorkflowCommand[]): Promise<void> {
    const { name } = this.workflow;
    const issued = commands.map((c, i) => ({ ...c, commandId: deterministicId(name, recorded.id, String(i)) }));
    const step: WorkflowStep = {
      Workflow: name,
      Input: { EventID: recorded.id, Stream: recorded.stream, Type: recorded.type, Position: recorded.position },
      Commands: issued.map((c) => ({
        CommandID: c.commandId,
        Handler: c.handler,
        EntityID: c.entityId,
        Type: c.type,
        Reason: c.reason,
      })),
    };
    const correlationId =
      typeof recorded.metadata.correlationId === "string" ? recorded.metadata.correlationId : recorded.id;
    const event = encodeWorkflowStep(
      step,
      {
        time: recorded.time,
        actor: workflowActor(name),
        reason: `reacting to ${recorded.type} in ${recorded.stream}`,
        correlationId,
        causationId: recorded.id,
      },
      deterministicId(name, recorded.id),
    );
    await this.record(event);
    for (const command of issued) {
      const handler = this.options.handlers[command.handler];
      if (!handler)
        throw new Error(`workflow ${name} issued a command to ${command.handler}, which this host does not know`);
      const full = { ...command, causationId: recorded.id, correlationId, causationPosition: recorded.position };
      try {
        await handler(full);
      } catch (err) {
        await this.failed(full, err);
      }
    }
    this.options.logger.info(
      { workflow: name, input: recorded.id, commands: issued.map((c) => `${c.type} ${c.entityId}`) },
      "workflow step",
    );
  }

  /** Appends the step unless it is stored already: found when the replay began, or appended in this batch before. */
  private async record(step: NewEvent): Promise<void> {
    const { id } = step;
    if (this.recordedSinceCheckpoint.has(id) || this.foundAtReplay?.ids.has(id) === true) return;
    await this.steps.append(step);
    this.recordedSinceCheckpoint.add(id);
  }

  /**
   * A command that failed: tried again (the batch is delivered again) when the failure passes;
   * else its entity ends with the reason and the workflow goes on, so that one entity's data never
   * holds up every step after it. An entity that cannot even be ended is logged and left.
   */
  private async failed(command: IssuedCommand, err: unknown): Promise<void> {
    const { endEntity, logger } = this.options;
    if (endEntity === undefined || isTransientFailure(err)) throw err;
    const why = err instanceof Error ? err.message : String(err);
    const reason = `the orchestrator cannot carry out ${command.type}: ${why}`;
    const at = { err, workflow: this.workflow.name, command: command.type, entityId: command.entityId };
    logger.error(at, "a workflow command failed for this entity's data: the entity ends, the workflow goes on");
    try {
      await endEntity(command, reason.slice(0, 4096));
    } catch (endErr) {
      if (isTransientFailure(endErr)) throw endErr;
      logger.error({ ...at, endErr }, "the entity of a failed workflow command cannot be ended; the workflow goes on");
    }
  }
}
