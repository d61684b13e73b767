import { describe, expect, it } from "vitest";
import type { ExecutionCommand } from "../../../../machines/execution/execution-commands.ts";
import { executionDecider } from "../../../../machines/execution/execution-decider.ts";
import {
  executionChart,
  executionChartIndex,
  executionTransitions,
} from "../../../../machines/execution/execution-chart.ts";
import {
  COMPUTE_STATES,
  DESIRED_STATES,
  computeStateNumber,
  desiredStateNumber,
} from "../../../../machines/execution/execution-states.ts";
import type { JobType } from "../../../../machines/job/job-spec.ts";
import {
  ComputeStateName,
  type ExecutionEvent,
  type RunOutput,
} from "../../../../src/events/catalog/execution-events.ts";
import { chartStep } from "../../../support/chart-agreement.ts";
import { SPEC_NOW, SPEC_TIME, deciderSpec } from "../../../support/decider-spec.ts";

const ID = "e-00000000-0000-4000-8000-000000000002";
const JOB = "j-00000000-0000-4000-8000-000000000001";
const given = deciderSpec(executionDecider, ID);
const resources = { CPU: 0.5, Memory: 512_000_000, Disk: 0, GPU: 0 };
const create = (jobType: JobType = "batch"): ExecutionCommand => ({
  type: "Create",
  jobId: JOB,
  namespace: "default",
  nodeId: "node-1",
  jobType,
  jobVersion: 1,
  partitionIndex: 0,
  resources,
  executionTimeout: 60,
  timeoutBuffer: 120,
});
const created = (jobType: JobType = "batch"): ExecutionEvent => ({
  type: "ExecutionCreated",
  data: {
    ExecutionID: ID,
    JobID: JOB,
    Namespace: "default",
    NodeID: "node-1",
    JobType: jobType,
    JobVersion: 1,
    PartitionIndex: 0,
    DesiredState: jobType === "ops" || jobType === "daemon" ? "Running" : "Pending",
    AllocatedResources: resources,
    ExecutionTimeout: jobType === "service" || jobType === "daemon" ? 0 : 60,
    TimeoutBuffer: 120,
    PreviousExecution: "",
  },
});
const asked: ExecutionEvent = { type: "ExecutionBidAsked", data: { ExecutionID: ID, NodeID: "node-1" } };
const accepted: ExecutionEvent = { type: "ExecutionBidAccepted", data: { ExecutionID: ID, NodeID: "node-1" } };
/** A direct bid's acceptance says so: the workflow records no approval step for it. */
const acceptedDirect: ExecutionEvent = {
  type: "ExecutionBidAccepted",
  data: { ExecutionID: ID, NodeID: "node-1", Direct: true },
};
const approved: ExecutionEvent = { type: "ExecutionApproved", data: { ExecutionID: ID } };
const startedE: ExecutionEvent = { type: "ExecutionStarted", data: { ExecutionID: ID } };
const output: RunOutput = {
  Stdout: "hello\n",
  StdoutTruncated: false,
  stderr: "",
  StderrTruncated: false,
  ExitCode: 0,
  ErrorMsg: "",
};
const completed: ExecutionEvent = { type: "ExecutionCompleted", data: { ExecutionID: ID, RunOutput: output } };
const cancelled = (Previous: "Running" | "New" = "Running"): ExecutionEvent => ({
  type: "ExecutionCancelled",
  data: { ExecutionID: ID, Previous, Reason: "Execution stop requested because job has been stopped" },
});
const running = [created(), asked, accepted, approved, startedE];

describe("Bacalhau's state numbers", () => {
  it("names the same compute states as the event catalog's schema, in its order (machines/ may not import the schema)", () => {
    expect(COMPUTE_STATES.slice(1)).toEqual(ComputeStateName.literals);
  });

  it("serializes compute and desired states as v1.6/1.7 integers", () => {
    expect(COMPUTE_STATES.map((s, i) => `${i} ${s}`)).toEqual([
      "0 Undefined",
      "1 New",
      "2 AskForBid",
      "3 AskForBidAccepted",
      "4 AskForBidRejected",
      "5 BidAccepted",
      "6 Running",
      "7 Publishing",
      "8 BidRejected",
      "9 Completed",
      "10 Failed",
      "11 Cancelled",
    ]);
    expect(computeStateNumber("Cancelled")).toBe(11);
    expect(DESIRED_STATES).toEqual(["Pending", "Running", "Stopped"]);
    expect(desiredStateNumber("Stopped")).toBe(2);
  });
});

describe("an execution's life, as Bacalhau's orchestrator sees it", () => {
  it("is created New; batch and service ones wait for approval (desired Pending), ops and daemon ones run directly", () => {
    given().when(create()).then([created()]);
    given()
      .when(create("ops"))
      .then([created("ops")]);
    given()
      .when(create("daemon"))
      .then([created("daemon")]);
    expect(given([created()]).state).toMatchObject({
      computeState: "New",
      desiredState: "Pending",
      nodeId: "node-1",
      jobId: JOB,
      revision: 1,
      createTime: SPEC_NOW,
      allocatedResources: resources,
    });
    expect(given([created("daemon")]).state).toMatchObject({ desiredState: "Running", executionTimeout: 0 });
  });

  it("goes AskForBid → AskForBidAccepted → (approved) BidAccepted → Running → Completed", () => {
    given([created()]).when({ type: "AskForBid" }).then([asked]);
    given([created(), asked]).when({ type: "AcceptBid" }).then([accepted]);
    expect(given([created(), asked, accepted]).state).toMatchObject({
      computeState: "AskForBidAccepted",
      desiredState: "Pending",
    });
    given([created(), asked, accepted]).when({ type: "Approve" }).then([approved]);
    expect(given([created(), asked, accepted, approved]).state).toMatchObject({
      computeState: "BidAccepted",
      desiredState: "Running",
      computeMessage: "Running",
      executingSince: SPEC_NOW,
    });
    given([created(), asked, accepted, approved]).when({ type: "Start" }).then([startedE]);
    given(running).when({ type: "Complete", output }).then([completed]);
    expect(given([...running, completed]).state).toMatchObject({
      computeState: "Completed",
      desiredState: "Stopped",
      desiredMessage: "execution completed",
      runOutput: output,
      revision: 6,
    });
  });

  it("keeps where its node published its results; an end without them has none", () => {
    const publishedResult = { Type: "local", Params: { Name: `${ID}.tar.gz`, Bytes: 120, SHA256: "ab" } };
    const withResult: ExecutionEvent = {
      type: "ExecutionCompleted",
      data: { ExecutionID: ID, RunOutput: output, PublishedResult: publishedResult },
    };
    given(running).when({ type: "Complete", output, publishedResult }).then([withResult]);
    expect(given([...running, withResult]).state.publishedResult).toEqual(publishedResult);
    expect(given([...running, completed]).state.publishedResult).toBeUndefined();
  });

  it("keeps the limits the node runs it under, reported with its start, through its end", () => {
    const details = { "HostConfig.PidsLimit": "1024", "HostConfig.CapDrop": "ALL" };
    const startedWith: ExecutionEvent = { type: "ExecutionStarted", data: { ExecutionID: ID, Details: details } };
    given([created(), asked, accepted, approved]).when({ type: "Start", details }).then([startedWith]);
    const limited = [created(), asked, accepted, approved, startedWith];
    expect(given(limited).state).toMatchObject({ computeState: "Running", limits: details });
    expect(given([...limited, completed]).state).toMatchObject({ computeState: "Completed", limits: details });
    expect(given([...limited, cancelled()]).state).toMatchObject({ computeState: "Cancelled", limits: details });
    // A node that says nothing of its limits: none are made up.
    expect(given(running).state.limits).toBeUndefined();
  });

  it("takes a direct (ops/daemon) execution to BidAccepted when the node accepts", () => {
    given([created("ops"), asked])
      .when({ type: "AcceptBid" })
      .then([acceptedDirect]);
    expect(given([created("ops"), asked, acceptedDirect]).state).toMatchObject({
      computeState: "BidAccepted",
      desiredState: "Running",
      executingSince: SPEC_NOW,
    });
    given([created("ops"), asked, acceptedDirect])
      .when({ type: "Start" })
      .then([startedE]);
  });

  it("records a node that declines: AskForBidRejected, desired Stopped", () => {
    const declined: ExecutionEvent = {
      type: "ExecutionBidDeclined",
      data: { ExecutionID: ID, NodeID: "node-1", Reason: "not enough memory" },
    };
    given([created(), asked]).when({ type: "DeclineBid", reason: "not enough memory" }).then([declined]);
    expect(given([created(), asked, declined]).state).toMatchObject({
      computeState: "AskForBidRejected",
      computeMessage: "not enough memory",
      desiredState: "Stopped",
      desiredMessage: "bid rejected",
    });
  });

  it("records the orchestrator turning a bid down: BidRejected, desired Stopped", () => {
    const reason = "Execution stop requested because there are more executions than needed";
    given([created(), asked, accepted])
      .when({ type: "Reject", reason })
      .then([{ type: "ExecutionRejected", data: { ExecutionID: ID, Reason: reason } }]);
    expect(
      given([created(), asked, accepted, { type: "ExecutionRejected", data: { ExecutionID: ID, Reason: reason } }])
        .state,
    ).toMatchObject({ computeState: "BidRejected", desiredState: "Stopped" });
  });

  it("fails on the node's error, keeping what it said and the output it had", () => {
    const failed: ExecutionEvent = {
      type: "ExecutionFailed",
      data: {
        ExecutionID: ID,
        Previous: "Running",
        Cause: "Node",
        Message: "exit code 3",
        RunOutput: { ...output, ExitCode: 3 },
      },
    };
    given(running)
      .when({ type: "Fail", reason: "exit code 3", cause: "Node", output: { ...output, ExitCode: 3 } })
      .then([failed]);
    expect(given([...running, failed]).state).toMatchObject({
      computeState: "Failed",
      computeMessage: "exit code 3",
      desiredState: "Stopped",
      runOutput: { ExitCode: 3 },
    });
    given([created()])
      .when({ type: "Fail", reason: "node has disappeared", cause: "Orchestrator" })
      .then([
        {
          type: "ExecutionFailed",
          data: { ExecutionID: ID, Previous: "New", Cause: "Orchestrator", Message: "node has disappeared" },
        },
      ]);
  });

  it("fails a service or daemon execution that completes: they should run until stopped", () => {
    const longRunning = [created("service"), asked, accepted, approved, startedE];
    given(longRunning)
      .when({ type: "Complete", output })
      .then([
        {
          type: "ExecutionFailed",
          data: {
            ExecutionID: ID,
            Previous: "Running",
            Cause: "CompletedUnexpectedly",
            Message: "execution completed unexpectedly",
            RunOutput: output,
          },
        },
      ]);
  });

  it("is cancelled from any state that is not terminal", () => {
    given(running)
      .when({ type: "Cancel", reason: "Execution stop requested because job has been stopped" })
      .then([cancelled()]);
    given([created()])
      .when({ type: "Cancel", reason: "Execution stop requested because job has been stopped" })
      .then([cancelled("New")]);
    expect(given([...running, cancelled()]).state).toMatchObject({
      computeState: "Cancelled",
      desiredState: "Stopped",
      desiredMessage: "Execution stop requested because job has been stopped",
    });
  });

  it("keeps a cancelled execution's output from its node's late report of the end, once, and stays Cancelled", () => {
    const printed: RunOutput = { ...output, Stdout: "tick\n", ExitCode: 137 };
    const kept: ExecutionEvent = { type: "ExecutionOutputKept", data: { ExecutionID: ID, RunOutput: printed } };
    given([...running, cancelled()])
      .when({ type: "KeepOutput", output: printed })
      .then([kept]);
    const after = given([...running, cancelled(), kept]).state;
    expect(after).toMatchObject({ computeState: "Cancelled", desiredState: "Stopped", runOutput: printed });
    expect(after.revision).toBe(given([...running, cancelled()]).state.revision + 1);
    // The node repeats its report until answered: the first output stands.
    given([...running, cancelled(), kept])
      .when({ type: "KeepOutput", output: { ...printed, Stdout: "other\n" } })
      .thenNothingHappened();
  });

  it("keeps output only for a cancelled execution", () => {
    given(running)
      .when({ type: "KeepOutput", output })
      .thenThrows({
        code: "Conflict",
        message: `execution ${ID} is in state Running, but KeepOutput expects Cancelled`,
      });
    given([...running, completed])
      .when({ type: "KeepOutput", output })
      .thenThrows({
        code: "Conflict",
        message: `execution ${ID} is in terminal state Completed and cannot transition to Cancelled with its output`,
      });
    given([])
      .when({ type: "KeepOutput", output })
      .thenThrows({ code: "NotFound", message: `execution not found: ${ID}` });
  });
});

describe("a damaged history", () => {
  it("folds nothing the execution's chart refuses: a start before approval, a completion before the run, an approval unasked", () => {
    const waiting = given([created(), asked]).state;
    expect(executionDecider.evolve(waiting, startedE, SPEC_TIME)).toBe(waiting);
    expect(executionDecider.evolve(waiting, completed, SPEC_TIME)).toBe(waiting);
    const fresh = given([created()]).state;
    expect(executionDecider.evolve(fresh, approved, SPEC_TIME)).toBe(fresh);
  });
});

describe("asking for a bid before the run (batch, service), as Bacalhau v1.7 does", () => {
  const waiting = [created(), accepted];
  const approvedRun = [created(), accepted, approved];

  it("given New (desired Pending), when the node accepts the bid, then AskForBidAccepted: it waits for approval and runs nothing", () => {
    given([created()]).when({ type: "AcceptBid" }).then([accepted]);
    expect(given(waiting).state).toMatchObject({
      computeState: "AskForBidAccepted",
      desiredState: "Pending",
      executingSince: undefined,
    });
  });

  it("given New, when the node declines, then AskForBidRejected, desired Stopped with 'bid rejected' and the node's reason", () => {
    const declined: ExecutionEvent = {
      type: "ExecutionBidDeclined",
      data: { ExecutionID: ID, NodeID: "node-1", Reason: "node n1 cannot fit execution now" },
    };
    given([created()]).when({ type: "DeclineBid", reason: "node n1 cannot fit execution now" }).then([declined]);
    expect(given([created(), declined]).state).toMatchObject({
      computeState: "AskForBidRejected",
      computeMessage: "node n1 cannot fit execution now",
      desiredState: "Stopped",
      desiredMessage: "bid rejected",
    });
  });

  it("given an accepted bid not yet approved, when the node (asked again) declines, then its last word stands: AskForBidRejected", () => {
    given(waiting)
      .when({ type: "DeclineBid", reason: "busy now" })
      .then([{ type: "ExecutionBidDeclined", data: { ExecutionID: ID, NodeID: "node-1", Reason: "busy now" } }]);
  });

  it("given an approved bid, when the node refuses the run, then Failed (cause Node) with its reason: it ran nothing and the execution ends", () => {
    given(approvedRun)
      .when({ type: "DeclineBid", reason: "node n1 cannot fit execution now" })
      .then([
        {
          type: "ExecutionFailed",
          data: {
            ExecutionID: ID,
            Previous: "BidAccepted",
            Cause: "Node",
            Message: "node n1 cannot fit execution now",
          },
        },
      ]);
    given([created("ops"), accepted])
      .when({ type: "DeclineBid", reason: "busy" })
      .thenMatches([{ type: "ExecutionFailed", data: { Previous: "BidAccepted", Cause: "Node" } }]);
  });

  it("given an approved or running execution, when the node answers a resent RunExecution with its bid again, then nothing happens", () => {
    given(approvedRun).when({ type: "AcceptBid" }).thenNothingHappened();
    given([...approvedRun, startedE])
      .when({ type: "AcceptBid" })
      .thenNothingHappened();
    given([...approvedRun, startedE])
      .when({ type: "DeclineBid", reason: "stale answer to a resent ask" })
      .thenNothingHappened();
  });

  it("given a direct (ops, daemon) execution, when the node accepts, then BidAccepted at once: nothing to approve", () => {
    given([created("daemon")])
      .when({ type: "AcceptBid" })
      .then([acceptedDirect]);
    expect(given([created("daemon"), acceptedDirect]).state).toMatchObject({
      computeState: "BidAccepted",
      desiredState: "Running",
    });
    given([created("daemon"), acceptedDirect])
      .when({ type: "Approve" })
      .thenNothingHappened();
    // Stored before Direct existed: the same state.
    expect(given([created("daemon"), accepted]).state).toMatchObject({
      computeState: "BidAccepted",
      desiredState: "Running",
    });
  });

  it("given several accepted bids, the orchestrator approves one and rejects another: BidRejected, desired Stopped, its reason kept", () => {
    const reason = "Execution stop requested because there are more executions than needed";
    given(waiting).when({ type: "Approve" }).then([approved]);
    given(waiting)
      .when({ type: "Reject", reason })
      .then([{ type: "ExecutionRejected", data: { ExecutionID: ID, Reason: reason } }]);
    given(approvedRun)
      .when({ type: "Reject", reason })
      .thenThrows({
        code: "Conflict",
        message: `execution ${ID} is in state BidAccepted, but Reject expects New, AskForBid, AskForBidAccepted, BidRejected`,
      });
  });
});

describe("repeats change nothing; terminal executions stay terminal", () => {
  it("writes nothing for a command that repeats what already happened", () => {
    given([created(), asked]).when({ type: "AskForBid" }).thenNothingHappened();
    given([created(), asked, accepted]).when({ type: "AcceptBid" }).thenNothingHappened();
    given([created(), asked, accepted, approved]).when({ type: "Approve" }).thenNothingHappened();
    given(running).when({ type: "Start" }).thenNothingHappened();
    given([...running, completed])
      .when({ type: "Complete", output })
      .thenNothingHappened();
    given([...running, cancelled()])
      .when({ type: "Cancel", reason: "again" })
      .thenNothingHappened();
  });

  it("refuses to move a compute-terminal execution, with Bacalhau's message", () => {
    given([...running, completed])
      .when({ type: "Cancel", reason: "x" })
      .thenThrows({
        code: "Conflict",
        message: `execution ${ID} is in terminal state Completed and cannot transition to Cancelled`,
      });
    given([...running, cancelled()])
      .when({ type: "Complete", output })
      .thenThrows({
        code: "Conflict",
        message: `execution ${ID} is in terminal state Cancelled and cannot transition to Completed`,
      });
    given([...running, cancelled()])
      .when({ type: "Start" })
      .thenThrows({
        code: "Conflict",
        message: `execution ${ID} is in terminal state Cancelled and cannot transition to Running`,
      });
  });

  it("refuses a command the current state does not take, naming the states that do", () => {
    given([created()])
      .when({ type: "Start" })
      .thenThrows({
        code: "Conflict",
        message: `execution ${ID} is in state New, but Start expects BidAccepted, Running`,
      });
    given([created()])
      .when({ type: "Approve" })
      .thenThrows({
        code: "Conflict",
        message: `execution ${ID} is in state New, but Approve expects AskForBidAccepted, BidAccepted`,
      });
    given([
      created(),
      asked,
      { type: "ExecutionBidDeclined", data: { ExecutionID: ID, NodeID: "node-1", Reason: "busy" } },
    ])
      .when({ type: "AcceptBid" })
      .thenThrows({ code: "Conflict" });
  });

  it("refuses commands on an unknown execution, a second creation, and an id that is not e-<uuid>", () => {
    given()
      .when({ type: "Start" })
      .thenThrows({ code: "NotFound", message: `execution not found: ${ID}` });
    given([created()])
      .when(create())
      .thenThrows({ code: "Conflict", message: `execution ${ID} already exists` });
    deciderSpec(executionDecider, "e-1")()
      .when(create())
      .thenThrows({ code: "Conflict", message: 'an execution\'s id is e-<uuid>, not "e-1"' });
    given()
      .when({ ...create(), jobId: "job-1" } as ExecutionCommand)
      .thenThrows({ code: "Conflict", message: 'an execution belongs to a job j-<uuid>, not "job-1"' });
  });
});

describe("the execution timeout", () => {
  it("asks for a deadline ExecutionTimeout + buffer after the execution began executing", () => {
    expect(executionDecider.deadlines?.(given([created(), asked, accepted]).state)).toEqual([]);
    expect(executionDecider.deadlines?.(given(running).state)).toEqual([
      { name: "execution-timeout", at: SPEC_NOW + 180_000, command: { type: "TimeOutExecution" } },
    ]);
    expect(executionDecider.deadlines?.(given([...running, completed]).state)).toEqual([]);
    // A service's has no ExecutionTimeout: only its start is awaited (below, "the answer bound").
    const service = given([created("service"), asked, accepted, approved]).state;
    expect(executionDecider.deadlines?.(service)?.map((d) => d.name)).toEqual(["answer-timeout"]);
  });

  it("fails an execution still executing at the deadline, with Bacalhau's message", () => {
    given(running)
      .when({ type: "TimeOutExecution" }, SPEC_NOW + 180_000)
      .then([
        {
          type: "ExecutionFailed",
          data: {
            ExecutionID: ID,
            Previous: "Running",
            Cause: "ExecutionTimeout",
            Message: "Execution timed out. Execution took longer than 1m0s",
          },
        },
      ]);
  });

  it("ignores a timeout that comes early or finds the execution ended", () => {
    given(running)
      .when({ type: "TimeOutExecution" }, SPEC_NOW + 179_999)
      .thenNothingHappened();
    given([...running, completed])
      .when({ type: "TimeOutExecution" }, SPEC_NOW + 180_000)
      .thenNothingHappened();
    given([created()])
      .when({ type: "TimeOutExecution" }, SPEC_NOW + 999_999)
      .thenNothingHappened();
  });

  it("folds nothing onto a terminal execution", () => {
    const state = given([...running, completed]).state;
    expect(executionDecider.evolve(state, cancelled(), SPEC_TIME)).toBe(state);
  });
});

describe("the answer bound: work its node never answers ends", () => {
  const BOUND = 300_000;
  const answerDeadline = (history: readonly ExecutionEvent[]) =>
    executionDecider.deadlines?.(given(history).state).find((d) => d.name === "answer-timeout");
  const unanswered = (Previous: "New" | "BidAccepted", Message: string): ExecutionEvent => ({
    type: "ExecutionFailed",
    data: { ExecutionID: ID, Previous, Cause: "Unanswered", Message },
  });
  const withBound = (AnswerTimeoutMs: number) =>
    ({ ...created(), data: { ...(created().data as object), AnswerTimeoutMs } }) as ExecutionEvent;
  const declined: ExecutionEvent = {
    type: "ExecutionBidDeclined",
    data: { ExecutionID: ID, NodeID: "node-1", Reason: "busy" },
  };
  const bid = "Execution unanswered: node node-1 did not answer AskForBid within 5m0s";

  it("records the bound the orchestrator gave at creation; one created before it was recorded gets 5 minutes", () => {
    given()
      .when({ ...create(), answerTimeoutMs: 3_000 } as ExecutionCommand)
      .then([withBound(3_000)]);
    expect(given([withBound(3_000)]).state.answerTimeoutMs).toBe(3_000);
    expect(given([created()]).state.answerTimeoutMs).toBe(BOUND);
  });

  it("asks for a deadline while the node owes an answer (its bid, a direct run, its start), on listening time", () => {
    const command = { type: "TimeOutAnswer" };
    const expected = { name: "answer-timeout", at: SPEC_NOW + BOUND, command, listenMs: BOUND };
    expect(answerDeadline([created()])).toEqual(expected);
    expect(answerDeadline([created(), asked])).toMatchObject({ at: SPEC_NOW + BOUND });
    expect(answerDeadline([created("ops")])).toMatchObject({ at: SPEC_NOW + BOUND });
    expect(answerDeadline([created(), accepted, approved])).toMatchObject({ at: SPEC_NOW + BOUND });
    expect(answerDeadline([created("daemon"), acceptedDirect])).toMatchObject({ at: SPEC_NOW + BOUND });
    // The orchestrator's move (approval), a running or an ended execution: nothing owed.
    expect(answerDeadline([created(), accepted])).toBeUndefined();
    expect(answerDeadline(running)).toBeUndefined();
    expect(answerDeadline([created(), declined])).toBeUndefined();
    expect(answerDeadline([created(), cancelled("New")])).toBeUndefined();
  });

  it("counts from when the answer came to be owed: the approval, not the creation", () => {
    const history = [
      { event: created(), time: SPEC_TIME },
      { event: accepted, time: new Date(SPEC_NOW + 10_000).toISOString() },
      { event: approved, time: new Date(SPEC_NOW + 20_000).toISOString() },
    ];
    const state = history.reduce((s, { event, time }) => executionDecider.evolve(s, event, time), given().state);
    const deadline = executionDecider.deadlines?.(state).find((d) => d.name === "answer-timeout");
    expect(deadline?.at).toBe(SPEC_NOW + 20_000 + BOUND);
  });

  it("given work unanswered past the bound, when its deadline comes, then Failed, naming node, what and bound", () => {
    given([created()])
      .when({ type: "TimeOutAnswer" }, SPEC_NOW + BOUND)
      .then([unanswered("New", bid)]);
    given([created("ops")])
      .when({ type: "TimeOutAnswer" }, SPEC_NOW + BOUND)
      .then([unanswered("New", "Execution unanswered: node node-1 did not answer RunExecution within 5m0s")]);
    const start = "did not report it started within 5m0s of being told to run it (RunExecution)";
    given([created(), accepted, approved])
      .when({ type: "TimeOutAnswer" }, SPEC_NOW + BOUND)
      .then([unanswered("BidAccepted", `Execution unanswered: node node-1 ${start}`)]);
    given([withBound(1_500)])
      .when({ type: "TimeOutAnswer" }, SPEC_NOW + 1_500)
      .then([unanswered("New", "Execution unanswered: node node-1 did not answer AskForBid within 1500ms")]);
    const state = executionDecider.evolve(given([created()]).state, unanswered("New", bid), SPEC_TIME);
    expect(state).toMatchObject({ computeState: "Failed", desiredState: "Stopped", computeMessage: bid });
    expect(executionDecider.deadlines?.(state)).toEqual([]);
  });

  it("given an answer or an end before the bound, or a deadline that comes early, then nothing happens", () => {
    given([created()])
      .when({ type: "TimeOutAnswer" }, SPEC_NOW + BOUND - 1)
      .thenNothingHappened();
    given([created(), accepted])
      .when({ type: "TimeOutAnswer" }, SPEC_NOW + BOUND)
      .thenNothingHappened();
    given(running)
      .when({ type: "TimeOutAnswer" }, SPEC_NOW + 10 * BOUND)
      .thenNothingHappened();
    given([...running, completed])
      .when({ type: "TimeOutAnswer" }, SPEC_NOW + 10 * BOUND)
      .thenNothingHappened();
    given([created(), cancelled("New")])
      .when({ type: "TimeOutAnswer" }, SPEC_NOW + 10 * BOUND)
      .thenNothingHappened();
    given().when({ type: "TimeOutAnswer" }, SPEC_NOW).thenNothingHappened();
  });
});

describe("the chart and decide", () => {
  it("agree on every state a random run of commands reaches: decide emits only what the chart takes", () => {
    const commands: ExecutionCommand[] = [
      create(),
      create("ops"),
      { type: "AskForBid" },
      { type: "AcceptBid" },
      { type: "DeclineBid", reason: "busy" },
      { type: "Approve" },
      { type: "Reject", reason: "not needed" },
      { type: "Start" },
      { type: "Complete", output },
      { type: "Fail", reason: "boom", cause: "Node" },
      { type: "Cancel", reason: "stop" },
      { type: "KeepOutput", output },
      { type: "TimeOutExecution" },
      { type: "TimeOutAnswer" },
    ];
    let seed = 5;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const seen = new Set<string>();
    for (let run = 0; run < 300; run++) {
      let state = executionDecider.initialState(ID);
      let now = SPEC_NOW;
      for (let step = 0; step < 10; step++) {
        now += Math.floor(random() * 120_000);
        const command = commands[Math.floor(random() * commands.length)]!;
        const decision = executionDecider.decide(command, state, { now });
        const value = () => executionTransitions.values[executionChartIndex(state)]!;
        if (command.type === "TimeOutExecution" || command.type === "TimeOutAnswer") expect(decision.ok).toBe(true);
        if (!decision.ok) continue;
        for (const e of decision.events) {
          expect(chartStep(executionChart, value(), state, e), `${command.type} in ${String(value())}`).toBeDefined();
          state = executionDecider.evolve(state, e, new Date(now).toISOString());
        }
        seen.add(String(value()));
      }
    }
    // Every state Shoal reaches (Publishing is Bacalhau's alone).
    expect([...seen].sort()).toEqual(
      [
        "absent",
        "AskForBid",
        "AskForBidAccepted",
        "AskForBidRejected",
        "BidAccepted",
        "BidRejected",
        "Cancelled",
        "Completed",
        "Failed",
        "New",
        "Running",
      ].sort(),
    );
  });
});
