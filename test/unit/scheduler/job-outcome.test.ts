import { describe, expect, it } from "vitest";
import { EMPTY_LEDGER } from "../../../src/scheduler/capacity-ledger.ts";
import {
  NODE_DISAPPEARED_MESSAGE,
  attemptOf,
  completedPartitions,
  jobOutcome,
  lostWithNode,
  nodeLostMessage,
  nodeUnmatchedMessage,
  releasesNode,
  wantsPlacement,
} from "../../../src/scheduler/job-outcome.ts";
import { placeJob, remainingPartitions } from "../../../src/scheduler/place-job.ts";
import type { ExistingExecution, JobType } from "../../../src/scheduler/placement-request.ts";
import { exec, job, node } from "./scheduler-fixtures.ts";

const p = (partitionIndex: number) => ({ partitionIndex });

describe("a job's outcome by its executions (Bacalhau v1.7's schedulers)", () => {
  it.each<{ name: string; type: JobType; count: number; executions: ExistingExecution[]; kind: string }>([
    { name: "batch, nothing yet", type: "batch", count: 1, executions: [], kind: "open" },
    {
      name: "batch, its one partition completed",
      type: "batch",
      count: 1,
      executions: [exec("e0", "n-a", "Completed", p(0))],
      kind: "completed",
    },
    {
      name: "batch, one of two partitions completed",
      type: "batch",
      count: 2,
      executions: [exec("e0", "n-a", "Completed", p(0)), exec("e1", "n-b", "Running", p(1))],
      kind: "open",
    },
    {
      name: "batch, the same partition completed twice is one",
      type: "batch",
      count: 2,
      executions: [exec("e0", "n-a", "Completed", p(0)), exec("e1", "n-b", "Completed", p(0))],
      kind: "open",
    },
    {
      name: "batch, a failure is retried, not the end",
      type: "batch",
      count: 1,
      executions: [exec("e0", "n-a", "Failed", p(0))],
      kind: "open",
    },
    {
      name: "batch, completed after a failed try",
      type: "batch",
      count: 1,
      executions: [exec("e0", "n-a", "Failed", p(0)), exec("e1", "n-b", "Completed", p(0))],
      kind: "completed",
    },
    {
      name: "ops, one still running",
      type: "ops",
      count: 0,
      executions: [exec("e0", "n-a", "Completed"), exec("e1", "n-b", "Running")],
      kind: "open",
    },
    {
      name: "ops, still asking for a bid",
      type: "ops",
      count: 0,
      executions: [exec("e0", "n-a", "AskForBid", { desiredState: "Running" })],
      kind: "open",
    },
    {
      name: "ops, all completed",
      type: "ops",
      count: 0,
      executions: [exec("e0", "n-a", "Completed"), exec("e1", "n-b", "Completed")],
      kind: "completed",
    },
    {
      name: "ops, a refused bid is no failure",
      type: "ops",
      count: 0,
      executions: [exec("e0", "n-a", "Completed"), exec("e1", "n-b", "AskForBidRejected")],
      kind: "completed",
    },
    {
      name: "ops, one failed",
      type: "ops",
      count: 0,
      executions: [exec("e0", "n-a", "Completed"), exec("e1", "n-b", "Failed")],
      kind: "failed",
    },
    {
      name: "service never ends",
      type: "service",
      count: 1,
      executions: [exec("e0", "n-a", "Failed", p(0))],
      kind: "open",
    },
    { name: "daemon never ends", type: "daemon", count: 0, executions: [exec("e0", "n-a", "Completed")], kind: "open" },
  ])("$name: $kind", ({ type, count, executions, kind }) => {
    expect(jobOutcome(type, count, executions).kind).toBe(kind);
  });

  it("names the failed execution of an ops job", () => {
    expect(jobOutcome("ops", 0, [exec("e0", "n-a", "Completed"), exec("e1", "n-b", "Failed")])).toEqual({
      kind: "failed",
      failed: exec("e1", "n-b", "Failed"),
    });
  });

  it("counts distinct completed partitions within Count", () => {
    expect(
      completedPartitions(3, [
        exec("a", "n", "Completed", p(0)),
        exec("b", "n", "Completed", p(0)),
        exec("c", "n", "Completed", p(5)),
        exec("d", "n", "Failed", p(1)),
      ]),
    ).toBe(1);
  });
});

describe("whether a job may take more executions now", () => {
  it.each<{ name: string; type: JobType; count: number; executions: ExistingExecution[]; wants: boolean }>([
    {
      name: "batch placed in full",
      type: "batch",
      count: 2,
      executions: [exec("e0", "n-a", "Running", p(0)), exec("e1", "n-b", "BidAccepted", p(1))],
      wants: false,
    },
    {
      name: "batch placed in part",
      type: "batch",
      count: 2,
      executions: [exec("e0", "n-a", "Running", p(0))],
      wants: true,
    },
    {
      name: "batch with a failed partition",
      type: "batch",
      count: 1,
      executions: [exec("e0", "n-a", "Failed", p(0))],
      wants: true,
    },
    { name: "batch done", type: "batch", count: 1, executions: [exec("e0", "n-a", "Completed", p(0))], wants: false },
    // Whatever the dispatch's steps: an execution asking for a bid, or whose bid was accepted, holds its partition.
    {
      name: "batch asking for a bid",
      type: "batch",
      count: 1,
      executions: [exec("e0", "n-a", "AskForBid", { desiredState: "Pending", partitionIndex: 0 })],
      wants: false,
    },
    {
      name: "batch, bid accepted",
      type: "batch",
      count: 1,
      executions: [exec("e0", "n-a", "AskForBidAccepted", { desiredState: "Pending", partitionIndex: 0 })],
      wants: false,
    },
    {
      name: "batch, bid refused",
      type: "batch",
      count: 1,
      executions: [exec("e0", "n-a", "AskForBidRejected", p(0))],
      wants: true,
    },
    {
      name: "service whose execution completed (unexpectedly)",
      type: "service",
      count: 1,
      executions: [exec("e0", "n-a", "Completed", p(0))],
      wants: true,
    },
    { name: "ops", type: "ops", count: 0, executions: [exec("e0", "n-a", "Running")], wants: true },
    { name: "daemon", type: "daemon", count: 0, executions: [], wants: true },
  ])("$name: $wants", ({ type, count, executions, wants }) => {
    expect(wantsPlacement(type, count, executions)).toBe(wants);
  });

  it("a failed, cancelled, lost or refused execution frees its partition; an execution asked to stop does too", () => {
    for (const state of ["Failed", "Cancelled", "BidRejected", "AskForBidRejected"] as const) {
      expect(remainingPartitions("batch", 1, [exec("e0", "n-a", state, p(0))], 10), state).toEqual([0]);
    }
    const stopping = exec("e0", "n-a", "Running", { desiredState: "Stopped", partitionIndex: 0 });
    expect(remainingPartitions("batch", 1, [stopping], 10)).toEqual([0]);
  });
});

describe("which try a new execution is (its id's last part)", () => {
  const executions = [
    exec("e0", "n-a", "Failed", p(0)),
    exec("e1", "n-b", "Failed", p(0)),
    exec("e2", "n-a", "Running", p(1)),
  ];
  it("counts the partition's executions for batch and service, wherever they ran", () => {
    expect(attemptOf("batch", executions, { nodeId: "n-c", partitionIndex: 0 })).toBe(2);
    expect(attemptOf("service", executions, { nodeId: "n-a", partitionIndex: 1 })).toBe(1);
    expect(attemptOf("batch", executions, { nodeId: "n-a", partitionIndex: 2 })).toBe(0);
  });
  it("counts the node's executions for ops and daemon", () => {
    expect(attemptOf("ops", executions, { nodeId: "n-c" })).toBe(0);
    expect(attemptOf("daemon", executions, { nodeId: "n-a" })).toBe(2);
  });
  it("differs for every retry of a partition: each placement's (partition, try) is new", () => {
    let history: ExistingExecution[] = [];
    const seen = new Set<string>();
    const nodes = [node("n-a"), node("n-b"), node("n-c")];
    for (let round = 0; round < 6; round++) {
      const r = placeJob(job({ nodes, executions: history }), EMPTY_LEDGER);
      if (r.placements.length === 0) break;
      for (const placement of r.placements) {
        const key = `${placement.partitionIndex}/${attemptOf("batch", history, placement)}`;
        expect(seen.has(key), key).toBe(false);
        seen.add(key);
        history = [
          ...history,
          exec(`e${round}`, placement.nodeId, "Failed", { partitionIndex: placement.partitionIndex ?? 0 }),
        ];
      }
    }
    expect(seen.size).toBe(6);
  });
});

describe("executions lost with their node", () => {
  it.each([
    [nodeLostMessage("n-1", "became UNHEALTHY"), "Execution lost: node n-1 became UNHEALTHY", true, true],
    [nodeLostMessage("n-1", "was rejected"), "Execution lost: node n-1 was rejected", true, true],
    [NODE_DISAPPEARED_MESSAGE, NODE_DISAPPEARED_MESSAGE, true, true],
    // Stopped for not matching: the node is free for the daemon again, but it heard the cancel (it was reachable).
    [
      nodeUnmatchedMessage("n-1", "zone = a: zone is now b"),
      "Execution stopped: node n-1 no longer matches the job's constraints (zone = a: zone is now b)",
      true,
      false,
    ],
    ["the command exited with code 3", "the command exited with code 3", false, false],
    ["execution completed unexpectedly", "execution completed unexpectedly", false, false],
  ])("%s: releases its node %s, may still run there %s", (message, text, releases, lost) => {
    expect(message).toBe(text);
    expect(releasesNode(message)).toBe(releases);
    expect(lostWithNode(message)).toBe(lost);
  });
});
