import { setup, type StateValue } from "xstate";
import type { ExecutionEvent } from "../../src/events/catalog/execution-events.ts";
import { compileChart } from "../compile-chart.ts";
import type { ExecutionState } from "./execution-state.ts";
import { COMPUTE_STATES, type ComputeStateName } from "./execution-states.ts";

/** What ends any execution that has not ended: its node's failure or the orchestrator's verdict, or a cancel. */
const ENDS = { ExecutionFailed: { target: "Failed" }, ExecutionCancelled: { target: "Cancelled" } } as const;

/** What the node may answer to the bid it was asked for (or to the work a direct execution was sent). */
const BID = {
  // A direct execution (ops, daemon: desired Running from its creation) that its node takes is executing already.
  ExecutionBidAccepted: [{ guard: "direct", target: "BidAccepted" }, { target: "AskForBidAccepted" }],
  ExecutionBidDeclined: { target: "AskForBidRejected" },
  ExecutionRejected: { target: "BidRejected" },
  ...ENDS,
} as const;

/** An execution that runs (or was told to) ends as it completes, fails or is cancelled. */
const EXECUTING = { ExecutionCompleted: { target: "Completed" }, ...ENDS } as const;

/**
 * An execution's statechart over Bacalhau's ComputeState (the desired state follows from it): its
 * events are its transitions. Nothing moves a compute-terminal execution (Bacalhau's store refuses
 * it too); a cancelled one may keep its output and stays Cancelled. `decideExecution` asks it
 * whether the event a command causes may happen now; `evolveExecution` takes the next state from it.
 * Publishing is Bacalhau's and never reached here.
 */
export const executionChart = setup({
  types: { context: {} as Pick<ExecutionState, "desiredState">, events: {} as ExecutionEvent },
  guards: { direct: ({ context }) => context.desiredState === "Running" },
}).createMachine({
  id: "execution",
  context: { desiredState: undefined },
  initial: "absent",
  states: {
    absent: { on: { ExecutionCreated: { target: "New" } } },
    New: { on: { ExecutionBidAsked: { target: "AskForBid" }, ...BID } },
    AskForBid: { on: BID },
    AskForBidAccepted: {
      on: {
        ExecutionApproved: { target: "BidAccepted" },
        ExecutionBidDeclined: { target: "AskForBidRejected" },
        ExecutionRejected: { target: "BidRejected" },
        ...ENDS,
      },
    },
    BidAccepted: { on: { ExecutionStarted: { target: "Running" }, ...EXECUTING } },
    Running: { on: EXECUTING },
    Publishing: { on: EXECUTING },
    AskForBidRejected: { type: "final" },
    BidRejected: { type: "final" },
    Completed: { type: "final" },
    Failed: { type: "final" },
    // The node's late report of a cancelled execution's end keeps what it printed; nothing else moves it.
    Cancelled: { type: "final", on: { ExecutionOutputKept: { target: "Cancelled" } } },
  },
});

/** The compute state a chart state is (undefined: not created). */
const project = (value: StateValue): ComputeStateName | undefined =>
  value === "absent" ? undefined : (value as ComputeStateName);

/** The execution chart as a table, for the fold. */
export const executionTransitions = compileChart<
  ComputeStateName | undefined,
  ExecutionState,
  ExecutionEvent,
  "ExecutionBidAccepted"
>(executionChart, project, { desiredState: undefined }, ["ExecutionBidAccepted"]);

const ABSENT = executionTransitions.indexOf("absent");
const INDEX = Object.fromEntries(
  COMPUTE_STATES.filter((s) => s !== "Undefined").map((s) => [s, executionTransitions.indexOf(s)]),
) as Readonly<Record<ComputeStateName, number>>;

/** Where an execution is in its chart (the index `executionTransitions` takes). */
export const executionChartIndex = (state: Pick<ExecutionState, "computeState">): number =>
  state.computeState === undefined ? ABSENT : INDEX[state.computeState];
