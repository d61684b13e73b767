import { describe, expect, it } from "vitest";
import type { ClusterEvent } from "../../../ui/src/api/types.ts";
import { isJobEvent } from "../../../ui/src/jobs/job-events.ts";

const event = (stream: string, type: string, data: Record<string, unknown> = {}) =>
  ({ stream, type, data }) as unknown as ClusterEvent;

describe("isJobEvent", () => {
  // More executions than the stream's entity filter could name (10 ids, the job's among them).
  const executions = new Set(Array.from({ length: 25 }, (_, i) => `e-${i}`));

  it("keeps the job's events and those of every one of its executions, the oldest too", () => {
    expect(isJobEvent("j-1", executions, event("job-j-1", "JobStarted"))).toBe(true);
    for (const id of ["e-0", "e-9", "e-24"])
      expect(isJobEvent("j-1", executions, event(`execution-${id}`, "ExecutionCompleted"))).toBe(true);
  });

  it("keeps an execution created for the job that the page has not read yet, and nothing of other jobs", () => {
    expect(isJobEvent("j-1", executions, event("execution-e-new", "ExecutionCreated", { JobID: "j-1" }))).toBe(true);
    expect(isJobEvent("j-1", executions, event("execution-e-new", "ExecutionStarted"))).toBe(false);
    expect(isJobEvent("j-1", executions, event("execution-e-x", "ExecutionCreated", { JobID: "j-2" }))).toBe(false);
    expect(isJobEvent("j-1", executions, event("job-j-2", "JobStarted"))).toBe(false);
    expect(isJobEvent("j-1", executions, event("job-j-10", "JobStarted"))).toBe(false);
  });
});
