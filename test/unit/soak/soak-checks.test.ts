import { describe, expect, it } from "vitest";
import { compareEventFeeds } from "../../soak/event-feed-check.ts";
import type { ReadEvent } from "../../soak/events-reader.ts";
import { jobEnds, storedJobs } from "../../soak/job-ends-check.ts";
import { nodesBlamedWhileRunning } from "../../soak/node-health-check.ts";
import { soakSettings } from "../../soak/soak-settings.ts";
import type { StoreEvent } from "../../soak/store-events.ts";
import { unexpectedErrors } from "../../soak/unexpected-errors.ts";

/**
 * The soak's checks (npm run soak) on hand-made stores and feeds: each finds the fault it is there
 * for, so a soak that passes is not a soak that could not fail.
 */
const AT = "2026-11-28T10:00:00.000Z";
const stored = (position: number, stream: string, type = "NodeRegistered", time = AT): StoreEvent => ({
  position,
  id: `e-${position}`,
  stream,
  type,
  time,
});
const read = (seq: number, e: StoreEvent): ReadEvent => ({
  seq,
  id: e.id,
  position: e.position,
  stream: e.stream,
  type: e.type,
  subject: `shoal.events.${e.stream}`,
});

// Positions 1-5: two node events, a workflow step (never published), a job event, a node event.
const store = [
  stored(1, "node-a"),
  stored(2, "node-b"),
  stored(3, "workflow-placement", "PlacementPlanned"),
  stored(4, "job-j-1", "JobSubmitted"),
  stored(5, "node-a", "NodeApproved"),
];
const [n1, n2, , j4, n5] = store as [StoreEvent, StoreEvent, StoreEvent, StoreEvent, StoreEvent];

describe("compareEventFeeds", () => {
  it("passes a feed holding every publishable event once, in order; a consumer's redelivery is not a duplicate", () => {
    const result = compareEventFeeds(store, [read(1, n1), read(2, n2), read(2, n2), read(3, j4), read(4, n5)], 5);
    expect(result).toMatchObject({ stored: 4, read: 4, missing: [], duplicated: [], outOfOrder: [], unknown: [] });
  });

  it("finds an event missing downstream", () => {
    expect(compareEventFeeds(store, [read(1, n1), read(2, j4), read(3, n5)], 5).missing).toEqual([n2]);
  });

  it("finds an event JetStream holds twice (another stream sequence)", () => {
    const result = compareEventFeeds(store, [read(1, n1), read(2, n2), read(3, n2), read(4, j4), read(5, n5)], 5);
    expect(result.duplicated.map((r) => [r.seq, r.id])).toEqual([[3, "e-2"]]);
    expect(result.missing).toEqual([]);
  });

  it("finds events out of store order", () => {
    const result = compareEventFeeds(store, [read(1, n1), read(2, j4), read(3, n2), read(4, n5)], 5);
    expect(result.outOfOrder.map((o) => [o.after.position, o.event.position])).toEqual([[4, 2]]);
  });

  it("finds an event the store does not hold as it was read", () => {
    const forged = { ...read(5, n5), type: "NodeRejected" };
    expect(compareEventFeeds(store, [read(1, n1), read(2, n2), read(3, j4), forged], 5).unknown).toEqual([forged]);
  });

  it("compares only up to the store head it was given", () => {
    expect(compareEventFeeds(store, [read(1, n1), read(2, n2)], 2)).toMatchObject({ stored: 2, missing: [] });
  });
});

describe("nodesBlamedWhileRunning", () => {
  const events = [
    stored(1, "node-sim-1", "NodeBecameUnhealthy", "2026-11-28T10:00:00.000Z"),
    stored(2, "node-other", "NodeBecameUnhealthy", "2026-11-28T10:00:00.000Z"),
    stored(3, "node-sim-2", "NodeBecameUnknown", "2026-11-28T10:00:05.000Z"),
    stored(4, "node-sim-3", "NodeBecameUnhealthy", "2026-11-28T10:00:30.000Z"),
    stored(5, "node-sim-1", "NodeBecameHealthy", "2026-11-28T10:00:06.000Z"),
  ];
  it("names the soak's nodes marked UNHEALTHY or UNKNOWN before the fleet stopped, and no others", () => {
    const until = Date.parse("2026-11-28T10:00:10.000Z");
    const blamed = nodesBlamedWhileRunning(events, (id) => id.startsWith("sim-"), until);
    expect(blamed.map((b) => [b.nodeId, b.type])).toEqual([
      ["sim-1", "NodeBecameUnhealthy"],
      ["sim-2", "NodeBecameUnknown"],
    ]);
  });
});

describe("jobEnds", () => {
  const job = (id: string, jobType: string, ...types: string[]) =>
    types.map((type, i) => ({ ...stored(i, `job-${id}`, type), ...(type === "JobSubmitted" ? { jobType } : {}) }));
  it("finds jobs without an end state and services or daemons that ended otherwise than Stopped", () => {
    const ends = jobEnds(
      storedJobs([
        ...job("j-1", "batch", "JobSubmitted", "JobStarted", "JobCompleted"),
        ...job("j-2", "batch", "JobSubmitted", "JobStarted"),
        ...job("j-3", "service", "JobSubmitted", "JobStarted", "JobStopped"),
        ...job("j-4", "daemon", "JobSubmitted", "JobFailed"),
        ...job("j-5", "ops", "JobSubmitted", "JobQueued"),
      ]),
    );
    expect(ends.unended.map((j) => [j.jobId, j.state])).toEqual([
      ["j-2", "Running"],
      ["j-5", "Queued"],
    ]);
    expect(ends.longRunningNotStopped.map((j) => j.jobId)).toEqual(["j-4"]);
    expect(ends.counts).toEqual({
      "batch Completed": 1,
      "batch Running": 1,
      "service Stopped": 1,
      "daemon Failed": 1,
      "ops Queued": 1,
    });
  });
  it("counts the sim nodes' jobs apart from the agents' when the store says where a job runs", () => {
    const on = (runsOn: "sim" | "docker", events: StoreEvent[]) =>
      events.map((e) => (e.type === "JobSubmitted" ? { ...e, runsOn } : e));
    const ends = jobEnds(
      storedJobs([
        ...on("sim", job("j-1", "batch", "JobSubmitted", "JobCompleted")),
        ...on("docker", job("j-2", "batch", "JobSubmitted", "JobCompleted")),
        ...on("sim", job("j-3", "daemon", "JobSubmitted", "JobStarted")),
      ]),
    );
    expect(ends.counts).toEqual({ "sim batch Completed": 1, "docker batch Completed": 1, "sim daemon Running": 1 });
    expect(ends.unended.map((j) => [j.jobId, j.runsOn])).toEqual([["j-3", "sim"]]);
  });
});

describe("unexpectedErrors", () => {
  const CRASH = "TypeError: Cannot read properties of undefined (reading 'state')";
  it("keeps every error line, and a crash's stack, that no allow-list entry explains", () => {
    const lines = [
      { run: 1, level: 50, msg: "processor failed", line: "{}" },
      { run: 2, level: undefined, msg: CRASH, line: CRASH },
      { run: 2, level: 50, msg: "a known, explained message", line: "{}" },
    ];
    const allowed = [{ msg: /^a known, explained message$/, why: "test" }];
    expect(unexpectedErrors(lines, allowed).map((l) => l.msg)).toEqual(["processor failed", CRASH]);
  });
});

describe("soakSettings", () => {
  it("takes flags over SOAK_* variables over CI's defaults", () => {
    const settings = soakSettings(["--nodes", "10", "--duration", "30s"], { SOAK_NODES: "50", SOAK_JOB_RATE: "2" });
    expect(settings).toMatchObject({ simNodes: 10, jobPhaseMs: 30_000, jobsPerSecond: 2, agents: 2 });
    // Four heartbeats, as Shoal's own defaults (15s, 1m).
    expect(settings).toMatchObject({ simHeartbeatMs: 5000, disconnectTimeoutMs: 20_000 });
    expect(settings).toMatchObject({ simJobsPerSecond: 4, simRunMs: 2000 });
    expect(soakSettings(["--sim-run-time", "500ms"], { SOAK_SIM_JOB_RATE: "25" })).toMatchObject({
      simJobsPerSecond: 25,
      simRunMs: 500,
    });
  });
  it("refuses a bad value naming where it came from", () => {
    expect(() => soakSettings([], { SOAK_NODES: "many" })).toThrow('SOAK_NODES: "many" is not a whole number');
    expect(() => soakSettings(["--duration", "soon"], {})).toThrow('--duration: "soon" is not a duration');
    expect(() => soakSettings([], { SOAK_SIM_JOB_RATE: "0" })).toThrow('SOAK_SIM_JOB_RATE: "0" is not a rate');
  });
});
