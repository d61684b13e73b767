import { describe, expect, it } from "vitest";
import { auditChangeOf, labelChange } from "../../../src/projections/audit-diff/audit-change.ts";
import type { RecordedEvent } from "../../../src/events/store/event-store.ts";

const event = (type: string, stream: string, data: unknown, reason?: string): RecordedEvent => ({
  id: `e-${type}`,
  type,
  stream,
  revision: 3,
  position: 42,
  time: "2026-11-29T10:00:00.000Z",
  data,
  metadata: { actor: { type: "operator", id: "alice" }, ...(reason === undefined ? {} : { reason }) },
});

describe("a diff's changes", () => {
  it("compares labels before and after: added, removed, changed; the same value is no change", () => {
    expect(labelChange({ rack: "r1", os: "linux", gone: "x" }, { rack: "r7", os: "linux", zone: "a" })).toEqual({
      Added: { zone: "a" },
      Removed: { gone: "x" },
      Changed: { rack: { From: "r1", To: "r7" } },
    });
  });

  it("names the event, the entity, who and why; the reason from the metadata, else from the data", () => {
    expect(auditChangeOf(event("NodeCordoned", "node-n-1", { NodeID: "n-1", Reason: "r" }, "disk"))).toEqual({
      Position: 42,
      Time: "2026-11-29T10:00:00.000Z",
      Entity: "n-1",
      Change: "cordoned",
      Event: "NodeCordoned",
      By: "operator:alice",
      Reason: "disk",
    });
    const stopped = auditChangeOf(event("JobStopped", "job-j-1", { JobID: "j-1", Previous: "Queued", Reason: "nah" }));
    expect(stopped).toMatchObject({ Entity: "j-1", Change: "stopped", Reason: "nah", Details: { Previous: "Queued" } });
    const failed = { JobID: "j-1", Previous: "Queued", Cause: "QueueTimeout", Message: "timed out" };
    expect(auditChangeOf(event("JobFailed", "job-j-1", failed))).toMatchObject({
      Change: "failed",
      Reason: "timed out",
      Details: { Cause: "QueueTimeout" },
    });
  });

  it("lists no event outside the diff's kinds, and no label event that moved no label", () => {
    expect(auditChangeOf(event("JobQueued", "job-j-1", { JobID: "j-1" }))).toBeUndefined();
    expect(auditChangeOf(event("NodeBecameUnhealthy", "node-n-1", { NodeID: "n-1" }))).toBeUndefined();
    const info = event("NodeInfoUpdated", "node-n-1", { NodeID: "n-1", Changed: ["Version"] });
    expect(auditChangeOf(info, labelChange({ a: "1" }, { a: "1" }))).toBeUndefined();
    expect(auditChangeOf(info, labelChange({ a: "1" }, { a: "2" }))).toMatchObject({
      Change: "labels",
      Details: { Changed: { a: { From: "1", To: "2" } } },
    });
  });
});
