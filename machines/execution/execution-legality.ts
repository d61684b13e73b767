import { setup } from "xstate";
import type { ExecutionCommandType } from "./execution-commands.ts";
import type { ExecutionState } from "./execution-state.ts";
import { COMPUTE_STATES, type ComputeStateName } from "./execution-states.ts";

const LEGAL = { actions: "legal" } as const;
/** What any execution that is not compute-terminal accepts: the orchestrator may fail or cancel it. */
const ENDABLE = { Fail: LEGAL, Cancel: LEGAL } as const;
/** Where the node owes an answer to the work it was sent (its bid, its start): the answer bound may end it. */
const AWAITING = { TimeOutAnswer: LEGAL } as const;
const EXECUTING = { Complete: LEGAL, ...ENDABLE, TimeOutExecution: LEGAL } as const;

/**
 * Which command an execution accepts in which compute state: the legality table of every
 * execution command, as a statechart over Bacalhau's ComputeState (the desired state follows
 * from it). Transitions carry no target: `decideExecution` decides, `evolveExecution` folds. A
 * command repeating what already happened (Start on a Running execution, Cancel on a Cancelled
 * one) is legal and changes nothing, so that workflows and nodes may send it again; nothing moves
 * a compute-terminal execution elsewhere (Bacalhau's store refuses it too). TimeOutExecution and
 * TimeOutAnswer are never refused: where they are not legal they change nothing.
 */
export const executionLegality = setup({
  types: { events: {} as { type: ExecutionCommandType } },
  actions: { legal: () => undefined },
}).createMachine({
  id: "execution",
  initial: "absent",
  states: {
    absent: { on: { Create: LEGAL } },
    New: { on: { AskForBid: LEGAL, AcceptBid: LEGAL, DeclineBid: LEGAL, Reject: LEGAL, ...ENDABLE, ...AWAITING } },
    AskForBid: {
      on: { AskForBid: LEGAL, AcceptBid: LEGAL, DeclineBid: LEGAL, Reject: LEGAL, ...ENDABLE, ...AWAITING },
    },
    // A node asked twice may answer twice; before approval its last word stands (Bacalhau's OnBidComplete).
    AskForBidAccepted: { on: { AcceptBid: LEGAL, DeclineBid: LEGAL, Approve: LEGAL, Reject: LEGAL, ...ENDABLE } },
    // DeclineBid here: the node refused the run it was approved for (it ends Failed).
    BidAccepted: {
      on: { AcceptBid: LEGAL, DeclineBid: LEGAL, Approve: LEGAL, Start: LEGAL, ...EXECUTING, ...AWAITING },
    },
    // A resent RunExecution is answered again with the node's bid: acknowledged, nothing changes.
    Running: { on: { AcceptBid: LEGAL, DeclineBid: LEGAL, Start: LEGAL, ...EXECUTING } },
    Publishing: { on: { ...EXECUTING } },
    AskForBidRejected: { on: { DeclineBid: LEGAL } },
    BidRejected: { on: { Reject: LEGAL } },
    Completed: { on: { Complete: LEGAL } },
    Failed: { on: { Fail: LEGAL } },
    Cancelled: { on: { Cancel: LEGAL } },
  },
});

export type ExecutionStateValue = "absent" | ComputeStateName;

export const executionStateValue = (state: ExecutionState): ExecutionStateValue => state.computeState ?? "absent";

const table = new Map<string, boolean>();

function legalIn(value: ExecutionStateValue, command: ExecutionCommandType): boolean {
  const key = `${value}|${command}`;
  let legal = table.get(key);
  if (legal === undefined) {
    legal = executionLegality.resolveState({ value, context: {} }).can({ type: command });
    table.set(key, legal);
  }
  return legal;
}

/** May this execution accept a command of this type now? */
export const isExecutionCommandLegal = (state: ExecutionState, command: ExecutionCommandType): boolean =>
  legalIn(executionStateValue(state), command);

/** The compute states in which a command is legal, for the message that refuses it elsewhere. */
export const statesAccepting = (command: ExecutionCommandType): ComputeStateName[] =>
  COMPUTE_STATES.filter((s): s is ComputeStateName => s !== "Undefined" && legalIn(s, command));
