import { describe, expect, it } from "vitest";
import { effectiveLabels } from "../../../machines/node/effective-labels.ts";
import { nodeDecider } from "../../../machines/node/node-decider.ts";
import type { NodeEvent } from "../../../src/events/catalog/node-events.ts";
import { deciderSpec, SPEC_TIME } from "../../support/decider-spec.ts";
import { computeInfo } from "../../support/fixtures.ts";

const ID = "node-1";
const info = computeInfo(ID, { zone: "a", rack: "r1" });
const given = deciderSpec(nodeDecider, ID);
const BUILT_IN = { "Operating-System": "linux", Architecture: "amd64" };
const alice = { type: "operator", id: "alice" } as const;
const KEY = "UAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
const OTHER_KEY = "UBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB";

const registered = (membership: "PENDING" | "APPROVED" = "APPROVED"): NodeEvent => ({
  type: "NodeRegistered",
  data: { NodeID: ID, NodeType: "Compute", Info: info, Membership: membership, Lifecycle: 1 },
});
const cordoned: NodeEvent = { type: "NodeCordoned", data: { NodeID: ID, Reason: "disk failing", By: alice } };
const deleted: NodeEvent = { type: "NodeDeleted", data: { NodeID: ID, Membership: "APPROVED" } };
const self: NodeEvent = {
  type: "NodeRegistered",
  data: {
    NodeID: ID,
    NodeType: "Requester",
    Info: { ...info, NodeType: "Requester" },
    Membership: "APPROVED",
    Lifecycle: 1,
  },
};
const preauthorized = (publicKey?: string): NodeEvent => ({
  type: "NodePreauthorized",
  data: { NodeID: ID, ...(publicKey === undefined ? {} : { PublicKey: publicKey }), Reason: "rack 7", By: alice },
});

describe("cordon and uncordon", () => {
  it("cordons a registered node, keeping who and why in its state", () => {
    given([registered()]).when({ type: "Cordon", reason: "disk failing", by: alice }).then([cordoned]);
    expect(given([registered(), cordoned]).state.cordon).toEqual({
      reason: "disk failing",
      by: alice,
      since: SPEC_TIME,
    });
  });

  it("cordons a PENDING node too (approval and scheduling are separate, as in Nomad)", () => {
    given([registered("PENDING")])
      .when({ type: "Cordon", reason: "", by: alice })
      .then([{ ...cordoned, data: { ...cordoned.data, Reason: "" } } as NodeEvent]);
  });

  it("cordoning a cordoned node stores nothing and is no error (kubectl cordon is idempotent)", () => {
    given([registered(), cordoned])
      .when({ type: "Cordon", reason: "again", by: alice })
      .then([], "node already cordoned");
  });

  it("uncordons a cordoned node; uncordoning a schedulable one stores nothing", () => {
    given([registered(), cordoned])
      .when({ type: "Uncordon", reason: "disk replaced" })
      .then([{ type: "NodeUncordoned", data: { NodeID: ID, Reason: "disk replaced" } }]);
    given([registered()]).when({ type: "Uncordon", reason: "" }).then([], "node not cordoned");
    expect(
      given([registered(), cordoned, { type: "NodeUncordoned", data: { NodeID: ID, Reason: "" } }]).state.cordon,
    ).toBeUndefined();
  });

  it("refuses an unknown or deleted node with NotFound, the orchestrator with a conflict", () => {
    given()
      .when({ type: "Cordon", reason: "", by: alice })
      .thenThrows({ code: "NotFound", message: "node not found: node-1" });
    given([registered(), deleted]).when({ type: "Uncordon", reason: "" }).thenThrows({ code: "NotFound" });
    given([self])
      .when({ type: "Cordon", reason: "", by: alice })
      .thenThrows({ code: "Conflict", message: expect.stringContaining("is the orchestrator") as string });
  });

  it("a delete ends the cordon: a node joining again is schedulable", () => {
    expect(given([registered(), cordoned, deleted, registered()]).state.cordon).toBeUndefined();
  });

  it("a cordon lasts through health changes and info updates", () => {
    const state = given([
      registered(),
      cordoned,
      { type: "NodeBecameUnhealthy", data: { NodeID: ID, LastHeartbeat: null, DisconnectTimeoutMs: 1000 } },
      { type: "NodeBecameHealthy", data: { NodeID: ID, Previous: "UNHEALTHY" } },
      { type: "NodeInfoUpdated", data: { NodeID: ID, Info: computeInfo(ID, { zone: "b" }), Changed: ["Labels"] } },
    ]).state;
    expect(state.cordon?.reason).toBe("disk failing");
  });
});

describe("operator labels", () => {
  const set = (s: Record<string, string>, remove: string[] = [], reset: string[] = []) =>
    ({ type: "SetLabels", set: s, remove, reset }) as const;
  const labelsSet = (s: Record<string, string>, removed: string[] = [], reset: string[] = []): NodeEvent => ({
    type: "NodeLabelsSet",
    data: { NodeID: ID, Set: s, Removed: removed, Reset: reset },
  });

  it("sets, overrides and hides labels over what the node reports", () => {
    given([registered()])
      .when(set({ zone: "b", gpu: "a100" }, ["rack"]))
      .then([labelsSet({ zone: "b", gpu: "a100" }, ["rack"])]);
    const state = given([registered(), labelsSet({ zone: "b", gpu: "a100" }, ["rack"])]).state;
    expect(state.labelOverrides).toEqual({ zone: "b", gpu: "a100", rack: null });
    expect(effectiveLabels(state.info?.Labels ?? {}, state.labelOverrides)).toEqual({
      ...BUILT_IN,
      zone: "b",
      gpu: "a100",
    });
    // The node's own report is kept as it was.
    expect(state.info?.Labels).toEqual({ ...BUILT_IN, zone: "a", rack: "r1" });
  });

  it("a reset drops the override: the node's own value shows again", () => {
    const state = given([registered(), labelsSet({ zone: "b" }, ["rack"]), labelsSet({}, [], ["zone", "rack"])]).state;
    expect(state.labelOverrides).toEqual({});
    expect(effectiveLabels(state.info?.Labels ?? {}, state.labelOverrides)).toEqual({
      ...BUILT_IN,
      zone: "a",
      rack: "r1",
    });
  });

  it("operator labels win over a later report of the node", () => {
    const state = given([
      registered(),
      labelsSet({ zone: "b" }),
      {
        type: "NodeInfoUpdated",
        data: { NodeID: ID, Info: computeInfo(ID, { zone: "c", rack: "r2" }), Changed: ["Labels"] },
      },
    ]).state;
    expect(effectiveLabels(state.info?.Labels ?? {}, state.labelOverrides)).toEqual({
      ...BUILT_IN,
      zone: "b",
      rack: "r2",
    });
  });

  it("a change that changes nothing stores nothing", () => {
    given([registered(), labelsSet({ zone: "b" })])
      .when(set({ zone: "b" }))
      .then([], "labels unchanged");
    given([registered()])
      .when(set({}, [], ["zone"]))
      .then([], "labels unchanged");
  });

  it("refuses a contradiction or an empty change as invalid", () => {
    given([registered()])
      .when(set({ zone: "b" }, ["zone"]))
      .thenThrows({ code: "Invalid", message: "label zone is both set and removed" });
    given([registered()])
      .when(set({}, ["zone"], ["zone"]))
      .thenThrows({ code: "Invalid", message: "label zone is both removed and reset" });
    given([registered()]).when(set({})).thenThrows({ code: "Invalid", message: "no label to set, remove or reset" });
  });

  it("refuses an unknown node and the orchestrator", () => {
    given()
      .when(set({ zone: "b" }))
      .thenThrows({ code: "NotFound" });
    given([self])
      .when(set({ zone: "b" }))
      .thenThrows({ code: "Conflict" });
  });

  it("a delete drops the operator's labels", () => {
    expect(given([registered(), labelsSet({ zone: "b" }), deleted, registered()]).state.labelOverrides).toEqual({});
  });
});

describe("pre-authorised join", () => {
  const register = (publicKey?: string) =>
    ({ type: "Register", info, manualApproval: true, ...(publicKey === undefined ? {} : { publicKey }) }) as const;

  it("pre-authorises a node id that has never registered", () => {
    given()
      .when({ type: "Preauthorize", publicKey: KEY, reason: "rack 7", by: alice })
      .then([preauthorized(KEY)]);
    expect(given([preauthorized(KEY)]).state.preauthorization).toEqual({
      publicKey: KEY,
      reason: "rack 7",
      by: alice,
      at: SPEC_TIME,
    });
    expect(given([preauthorized(KEY)]).state.registered).toBe(false);
  });

  it("a pre-authorised node registers APPROVED under manual approval", () => {
    given([preauthorized()])
      .when(register())
      .thenMatches([{ type: "NodeRegistered", data: { Membership: "APPROVED" } }]);
    given([preauthorized(KEY)])
      .when(register(KEY))
      .thenMatches([{ type: "NodeRegistered", data: { Membership: "APPROVED" } }, { type: "NodeCredentialBound" }]);
    expect(given([preauthorized(KEY)]).when(register(KEY)).decision).toMatchObject({
      note: "node registered (pre-authorised)",
    });
  });

  it("a node joining with another key than the pre-authorised one stays PENDING", () => {
    given([preauthorized(KEY)])
      .when(register(OTHER_KEY))
      .thenMatches([{ type: "NodeRegistered", data: { Membership: "PENDING" } }, { type: "NodeCredentialBound" }]);
    given([preauthorized(KEY)])
      .when(register())
      .thenMatches([{ type: "NodeRegistered", data: { Membership: "PENDING" } }]);
  });

  it("without a pre-authorisation, or after it is revoked, a node stays PENDING", () => {
    given()
      .when(register())
      .thenMatches([{ type: "NodeRegistered", data: { Membership: "PENDING" } }]);
    given([preauthorized(), { type: "NodePreauthorizationRevoked", data: { NodeID: ID } }])
      .when(register())
      .thenMatches([{ type: "NodeRegistered", data: { Membership: "PENDING" } }]);
  });

  it("revokes; revoking nothing is NotFound", () => {
    given([preauthorized()])
      .when({ type: "RevokePreauthorization" })
      .then([{ type: "NodePreauthorizationRevoked", data: { NodeID: ID } }]);
    given()
      .when({ type: "RevokePreauthorization" })
      .thenThrows({ code: "NotFound", message: "node node-1 has no pre-authorisation to revoke" });
  });

  it("the same pre-authorisation again stores nothing; another key replaces it", () => {
    given([preauthorized(KEY)])
      .when({ type: "Preauthorize", publicKey: KEY, reason: "again", by: alice })
      .then([], "node already pre-authorised");
    given([preauthorized(KEY)])
      .when({ type: "Preauthorize", publicKey: OTHER_KEY, reason: "new key", by: alice })
      .thenMatches([{ type: "NodePreauthorized", data: { PublicKey: OTHER_KEY } }]);
  });

  it("refuses to pre-authorise a registered node (approve it instead); a deleted one may be", () => {
    given([registered("PENDING")])
      .when({ type: "Preauthorize", reason: "", by: alice })
      .thenThrows({ code: "Conflict", message: expect.stringContaining("approve it instead") as string });
    given([registered(), deleted])
      .when({ type: "Preauthorize", reason: "", by: alice })
      .then([{ type: "NodePreauthorized", data: { NodeID: ID, Reason: "", By: alice } }]);
  });

  it("a delete ends the pre-authorisation", () => {
    expect(given([preauthorized(), registered(), deleted]).state.preauthorization).toBeUndefined();
  });
});
