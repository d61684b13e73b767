import type { Logger } from "pino";
import type { Clock } from "../../actors/clock.ts";
import type { DeadlineKind, DeadlineScheduler } from "../../actors/deadline-scheduler.ts";
import type { Listening } from "../../actors/listening.ts";

/** Work its node has not answered is sent again this often, until answered or the answer bound ends it. */
export const RESEND_MS = 2_000;

/** The work messages a node may not hear the first time (it restarts, its subscription is not back yet). */
export type ResentMessage = "AskForBid" | "RunExecution" | "CancelExecution";

/**
 * One sending again of a chain's message: whether the chain goes on (false: the message is no longer due, or it ended
 * the execution itself). A throw or a rejection is logged and the chain goes on: the next try may get through.
 */
export type Resend = () => boolean | Promise<boolean>;

export interface WorkResendsOptions {
  /** The orchestrator's one deadline heap: every resend is a deadline in it, on `clock`. */
  readonly deadlines: DeadlineScheduler;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Whether the orchestrator's own transport is down: then nothing is published (the chains go on). */
  readonly transportDown?: () => boolean;
  /**
   * When the orchestrator begins to hear its nodes again (start-up over, its transport back): a chain whose last send
   * was withheld sends at once, rather than up to RESEND_MS into its node's answer bound.
   */
  readonly listening?: Pick<Listening, "onResume">;
}

interface Chain {
  readonly resend: Resend;
  /** The instant after which it is sent no more (Infinity: until `resend` ends it). */
  readonly until: number;
  /** Its last send was not published (the transport was down). */
  withheld: boolean;
}

/** The chains of one message, with their deadlines: the execution id is the key of both, no key string is built. */
interface Lane {
  readonly chains: Map<string, Chain>;
  readonly deadlines: DeadlineKind;
}

/**
 * Work messages sent again until their node answers, one chain per (execution, message): each chain is a deadline in
 * the one heap, RESEND_MS of the orchestrator's clock after its last send, that sends the message again until the
 * chain's own resend says it is no longer due, its bound passes, or end() (the node answered). Starting a chain that
 * runs already moves it on rather than adding a second, so a replayed step or the resume after a restart sends one.
 * While the orchestrator's own transport is down nothing is published and the chains wait; they send the moment it
 * is back.
 */
export class WorkResends {
  private readonly lanes: Record<ResentMessage, Lane>;
  private stopped = false;

  constructor(private readonly options: WorkResendsOptions) {
    const lane = (message: ResentMessage): Lane => ({
      chains: new Map(),
      deadlines: options.deadlines.kind((executionId) => this.fire(message, executionId)),
    });
    this.lanes = {
      AskForBid: lane("AskForBid"),
      RunExecution: lane("RunExecution"),
      CancelExecution: lane("CancelExecution"),
    };
    options.listening?.onResume(() => this.sendWithheld());
  }

  /** Whether a send now would be withheld: the orchestrator's own transport is down. */
  get withholding(): boolean {
    return this.options.transportDown?.() === true;
  }

  /**
   * After a send of `message` to `executionId`'s node (`published` false: withheld, the transport being down), keeps
   * sending it with `resend` every RESEND_MS until the chain ends, at the latest at `until`. Replaces the execution's
   * chain of that message, if any. Nothing once stopped.
   */
  keep(message: ResentMessage, executionId: string, resend: Resend, published = true, until = Infinity): void {
    if (this.stopped) return;
    const lane = this.lanes[message];
    lane.chains.set(executionId, { resend, until, withheld: !published });
    lane.deadlines.set(executionId, this.options.clock.now() + RESEND_MS);
  }

  has(message: ResentMessage, executionId: string): boolean {
    return this.lanes[message].chains.has(executionId);
  }

  /** No more of `message` to `executionId`'s node (it answered, or the message is no longer due). */
  end(message: ResentMessage, executionId: string): void {
    const lane = this.lanes[message];
    if (lane.chains.delete(executionId)) lane.deadlines.cancel(executionId);
  }

  /** No more resends (the orchestrator stops). */
  stop(): void {
    this.stopped = true;
    for (const lane of Object.values(this.lanes)) {
      for (const executionId of lane.chains.keys()) lane.deadlines.cancel(executionId);
      lane.chains.clear();
    }
  }

  /** Fired by the heap: nothing thrown here may escape (it would strand every deadline after it). */
  private fire(message: ResentMessage, executionId: string): void {
    const lane = this.lanes[message];
    const chain = lane.chains.get(executionId);
    if (chain === undefined) return;
    const { clock, logger } = this.options;
    if (clock.now() >= chain.until) {
      lane.chains.delete(executionId);
      logger.warn(
        { executionId, message },
        `a node did not answer ${message} within the answer bound; it is no longer sent`,
      );
      return;
    }
    if (this.withholding) return this.next(message, executionId, chain, true, false);
    let goesOn: boolean | Promise<boolean>;
    try {
      goesOn = chain.resend();
    } catch (err) {
      goesOn = Promise.reject(err as Error);
    }
    if (typeof goesOn === "boolean") return this.next(message, executionId, chain, goesOn, true);
    goesOn.then(
      (on) => this.next(message, executionId, chain, on, true),
      (err: unknown) => {
        logger.warn({ err, executionId, message }, `sending ${message} again failed`);
        this.next(message, executionId, chain, true, true);
      },
    );
  }

  /**
   * After one resend of `chain`. A chain replaced or ended while its resend was under way leaves the deadline to the
   * one that holds it now.
   */
  private next(message: ResentMessage, executionId: string, chain: Chain, goesOn: boolean, published: boolean): void {
    const lane = this.lanes[message];
    if (this.stopped || lane.chains.get(executionId) !== chain) return;
    if (!goesOn) return this.end(message, executionId);
    chain.withheld = !published;
    lane.deadlines.set(executionId, this.options.clock.now() + RESEND_MS);
  }

  /**
   * The orchestrator hears its nodes again: each chain whose last send was withheld sends now (those published before
   * keep their turn: a node retries its reports until answered, so an answer sent meanwhile still arrives).
   */
  private sendWithheld(): void {
    const now = this.options.clock.now();
    for (const lane of Object.values(this.lanes))
      for (const [executionId, chain] of lane.chains) if (chain.withheld) lane.deadlines.set(executionId, now);
  }
}
