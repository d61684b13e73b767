import { Schema } from "effect";
import { ErrorCode, type Msg, type NatsConnection, type NatsError, type Subscription } from "nats";
import type { Logger } from "pino";
import { commandContext, type CommandContext } from "../actors/command-context.ts";
import { asShoalError, badRequest, ShoalError, unavailable } from "../errors/shoal-error.ts";
import { ProtocolError, validate } from "../transport/codec.ts";
import type { ClusterRole } from "./cluster-role.ts";
import {
  decodeForwardedAnswer,
  decodeForwardedCommand,
  encodeForwardedAnswer,
  encodeForwardedCommand,
  type ForwardedAnswer,
} from "./forwarded-command.ts";
import type { CommandOutcome, OwnedCommand } from "./owned-command.ts";
import type { DutyStop } from "./duty-gate.ts";

/** Where a partition's owner takes the writes other orchestrators forward (nodes may neither publish nor listen). */
export const partitionCommandsSubject = (partition: number) => `shoal.cluster.commands.partition.${partition}`;
/** Where a duty's holder takes them. */
export const dutyCommandsSubject = (duty: string) => `shoal.cluster.commands.duty.${duty}`;
/** One queue group: while a lease changes hands, two subscribers may overlap for a moment, and only one gets each. */
const OWNERS = "shoal-owners";
/** Seconds a caller waits before trying again while a lease changes hands (a tick of the ownership loop). */
const RETRY_AFTER_SECONDS = 1;
/** Forwarded writes carried out at once by default: past it a caller is told to try again, not queued unbounded. */
const MAX_IN_FLIGHT = 64;

export interface OwnerCommandsOptions {
  readonly role: ClusterRole;
  readonly nc: NatsConnection;
  /** This orchestrator's node id: the owner's log says who forwarded. */
  readonly self: string;
  readonly logger: Logger;
  /** How long the receiver waits for the owner's answer before it answers Unavailable. */
  readonly timeoutMs: number;
  /** How many forwarded writes this owner carries out at once (default 64); more are refused Unavailable. */
  readonly maxInFlight?: number;
}

type Registered = OwnedCommand<unknown, unknown>;

/**
 * Writes carried out by their entity's owner. `run` does it here when this orchestrator is the owner (always, for a
 * sole orchestrator), and otherwise sends it over NATS to the subject of the entity's partition (or the command's
 * duty), where only the holder of that lease listens, and returns the owner's outcome or throws its refusal. No
 * listener (a lease between owners) or no answer in time is Unavailable; the owner checks its lease again on
 * arrival, so a command is carried out by one orchestrator at most.
 */
export class OwnerCommands {
  private readonly commands = new Map<string, Registered>();
  /** The partitions held, with their subscription once this orchestrator answers. */
  private readonly held = new Map<number, Subscription | undefined>();
  private answering = false;
  private readonly dutyStops: DutyStop[] = [];
  /** Forwarded writes being carried out: stop() waits for them, so none appends once the leases are handed back. */
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly options: OwnerCommandsOptions) {
    if (!options.role.clustered) return;
    options.role.onPartition({
      gained: (partition) => {
        this.held.get(partition)?.unsubscribe();
        this.held.set(partition, this.answering ? this.listen(partition) : undefined);
      },
      lost: (partition) => {
        this.held.get(partition)?.unsubscribe();
        this.held.delete(partition);
      },
    });
  }

  register<A, I>(command: OwnedCommand<A, I>): void {
    if (this.commands.has(command.name)) throw new Error(`the command ${command.name} is registered twice`);
    this.commands.set(command.name, command as unknown as Registered);
  }

  /** Carries out the command here if this orchestrator owns the entity, else has its owner do it. */
  async run<A, I>(
    command: OwnedCommand<A, I>,
    entityId: string,
    args: A,
    context: CommandContext,
    expectedRevision: number | undefined,
  ): Promise<CommandOutcome> {
    if (this.mine(command as unknown as Registered, entityId))
      return command.run(entityId, args, this.underLease(command, entityId, context), expectedRevision);
    return this.forward(command, entityId, args, context, expectedRevision);
  }

  /** Starts answering what others forward, for the partitions and duties held now and later (cluster mode only). */
  async answer(): Promise<void> {
    const { role } = this.options;
    if (!role.clustered || this.answering) return;
    this.answering = true;
    for (const partition of this.held.keys()) this.held.set(partition, this.listen(partition));
    const duties = new Set([...this.commands.values()].flatMap((c) => (c.duty === undefined ? [] : [c.duty])));
    for (const duty of duties) {
      const stop = await role.duty(duty).whileHeld(`answering forwarded ${duty} commands`, () => {
        const subscription = this.subscribe(dutyCommandsSubject(duty), { duty });
        return () => subscription.unsubscribe();
      });
      this.dutyStops.push(stop);
    }
  }

  /**
   * Stops answering (a caller's forward then finds no listener here, Unavailable, and tries again elsewhere) and
   * resolves once the forwarded writes already under way have finished: they append under leases this orchestrator
   * hands back only after this (the stop step bounds the wait).
   */
  async stop(): Promise<void> {
    this.answering = false;
    for (const [partition, subscription] of this.held) {
      subscription?.unsubscribe();
      this.held.set(partition, undefined);
    }
    for (const stop of this.dutyStops.splice(0)) stop();
    await Promise.allSettled([...this.inFlight]);
  }

  private mine(command: Registered, entityId: string): boolean {
    const { role } = this.options;
    if (!role.clustered) return true;
    return command.duty === undefined ? role.owns(entityId) : role.holdsDuty(command.duty);
  }

  /** A partition's owner writes under its lease: the events say which owner (and epoch) carried the command out. */
  private underLease<A, I>(command: OwnedCommand<A, I>, entityId: string, context: CommandContext): CommandContext {
    const lease = command.duty === undefined ? this.options.role.leaseOf(entityId) : undefined;
    return lease === undefined ? context : { ...context, lease };
  }

  private ownerName(command: Registered, entityId: string): string {
    return command.duty === undefined
      ? `the owner of partition ${this.options.role.partitionOf(entityId)}`
      : `the holder of the ${command.duty} duty`;
  }

  private readonly forward: OwnerCommands["run"] = async (command, entityId, args, context, expectedRevision) => {
    const { nc, role, timeoutMs, self } = this.options;
    const registered = command as unknown as Registered;
    const subject =
      command.duty === undefined
        ? partitionCommandsSubject(role.partitionOf(entityId))
        : dutyCommandsSubject(command.duty);
    const bytes = encodeForwardedCommand({
      Command: command.name,
      Entity: entityId,
      Args: Schema.encodeSync(command.args)(args),
      From: self,
      Actor: { Type: context.actor.type, ID: context.actor.id },
      ...(context.reason === undefined ? {} : { Reason: context.reason }),
      CorrelationID: context.correlationId,
      CausationID: context.causationId,
      ...(expectedRevision === undefined ? {} : { ExpectedRevision: expectedRevision }),
    });
    let reply: Msg;
    try {
      reply = await nc.request(subject, bytes, { timeout: timeoutMs });
    } catch (e) {
      throw this.unanswered(e as NatsError, this.ownerName(registered, entityId));
    }
    let answer: ForwardedAnswer;
    try {
      answer = decodeForwardedAnswer(reply.data);
    } catch (e) {
      throw new ShoalError({
        kind: "Internal",
        message: `${this.ownerName(registered, entityId)} answered something unreadable: ${(e as Error).message}`,
      });
    }
    if ("Refused" in answer) {
      const { Kind, Message, Hint, Details, RetryAfter } = answer.Refused;
      throw new ShoalError({
        kind: Kind,
        message: Message,
        ...(Hint === undefined ? {} : { hint: Hint }),
        ...(Details === undefined ? {} : { details: Details }),
        ...(RetryAfter === undefined ? {} : { retryAfterSeconds: RetryAfter }),
      });
    }
    const { Position, Revision, Note, Changed } = answer.Done;
    return {
      position: Position,
      changed: Changed,
      ...(Revision === undefined ? {} : { revision: Revision }),
      ...(Note === undefined ? {} : { note: Note }),
    };
  };

  private unanswered(e: NatsError, owner: string): ShoalError {
    if (e.code === ErrorCode.NoResponders)
      return unavailable(
        `no orchestrator answers as ${owner} now (its lease is changing hands); nothing was changed`,
        RETRY_AFTER_SECONDS,
      );
    if (e.code === ErrorCode.Timeout)
      return unavailable(
        `${owner} did not answer within ${this.options.timeoutMs / 1000} s; ` +
          "the change may have been made: read the entity before trying again",
        RETRY_AFTER_SECONDS,
      );
    return unavailable(`cannot reach ${owner}: ${e.message}`, RETRY_AFTER_SECONDS);
  }

  private listen(partition: number): Subscription {
    return this.subscribe(partitionCommandsSubject(partition), { partition });
  }

  private subscribe(subject: string, owner: { partition: number } | { duty: string }): Subscription {
    return this.options.nc.subscribe(subject, {
      queue: OWNERS,
      callback: (err, msg) => {
        if (err !== null || msg.reply === undefined) return;
        if (!this.answering) return this.respond(msg, refusal(this.stopping()));
        if (this.inFlight.size >= (this.options.maxInFlight ?? MAX_IN_FLIGHT))
          return this.respond(msg, refusal(this.busy()));
        const running = this.carryOut(msg, owner).finally(() => this.inFlight.delete(running));
        this.inFlight.add(running);
      },
    });
  }

  private stopping(): ShoalError {
    return unavailable("this orchestrator is stopping; nothing was changed", RETRY_AFTER_SECONDS);
  }

  private busy(): ShoalError {
    return unavailable(
      `this orchestrator is carrying out ${this.inFlight.size} forwarded writes already; nothing was changed`,
      RETRY_AFTER_SECONDS,
    );
  }

  /** Carries out a forwarded command and answers it; every failure is an answer from the closed set. */
  private async carryOut(msg: Msg, owner: { partition: number } | { duty: string }): Promise<void> {
    let answer: ForwardedAnswer;
    try {
      const outcome = await this.carryOutDecoded(msg.data, owner);
      answer = {
        Done: {
          ...(outcome.position === undefined ? {} : { Position: outcome.position }),
          ...(outcome.revision === undefined ? {} : { Revision: outcome.revision }),
          ...(outcome.note === undefined ? {} : { Note: outcome.note }),
          Changed: outcome.changed,
        },
      };
    } catch (e) {
      answer = refusal(
        e instanceof ProtocolError ? badRequest(`forwarded command refused: ${e.message}`) : asShoalError(e),
      );
    }
    this.respond(msg, answer);
  }

  private respond(msg: Msg, answer: ForwardedAnswer): void {
    try {
      msg.respond(encodeForwardedAnswer(answer));
    } catch (e) {
      // Too large to send (a refusal's details): the caller waits out its timeout, Unavailable.
      this.options.logger.error({ err: e }, "cannot answer a forwarded command");
    }
  }

  private async carryOutDecoded(
    data: Uint8Array,
    owner: { partition: number } | { duty: string },
  ): Promise<CommandOutcome> {
    const forwarded = decodeForwardedCommand(data);
    const command = this.commands.get(forwarded.Command);
    if (command === undefined) throw badRequest(`no such command: ${forwarded.Command}`);
    const addressed =
      "duty" in owner
        ? command.duty === owner.duty
        : command.duty === undefined && this.options.role.partitionOf(forwarded.Entity) === owner.partition;
    if (!addressed) throw badRequest(`${forwarded.Command} for ${forwarded.Entity} was sent to the wrong owner`);
    if (!this.mine(command, forwarded.Entity))
      throw unavailable(
        `this orchestrator is no longer ${this.ownerName(command, forwarded.Entity)}; nothing was changed`,
        RETRY_AFTER_SECONDS,
      );
    const args = validate(command.args, forwarded.Args);
    const context = commandContext(
      { type: forwarded.Actor.Type, id: forwarded.Actor.ID },
      {
        ...(forwarded.Reason === undefined ? {} : { reason: forwarded.Reason }),
        correlationId: forwarded.CorrelationID,
        causationId: forwarded.CausationID,
      },
    );
    this.options.logger.info(
      {
        command: forwarded.Command,
        entity: forwarded.Entity,
        from: forwarded.From,
        actor: context.actor,
        correlationId: context.correlationId,
      },
      "carrying out a command another orchestrator forwarded",
    );
    return command.run(
      forwarded.Entity,
      args,
      this.underLease(command, forwarded.Entity, context),
      forwarded.ExpectedRevision,
    );
  }
}

function refusal(error: ShoalError): ForwardedAnswer {
  return {
    Refused: {
      Kind: error.kind,
      Message: error.message,
      ...(error.hint === undefined ? {} : { Hint: error.hint }),
      ...(error.details === undefined ? {} : { Details: error.details }),
      ...(error.retryAfterSeconds === undefined ? {} : { RetryAfter: error.retryAfterSeconds }),
    },
  };
}
