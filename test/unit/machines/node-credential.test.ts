import { describe, expect, it } from "vitest";
import type { NodeCommand } from "../../../machines/node/node-commands.ts";
import { nodeDecider } from "../../../machines/node/node-decider.ts";
import { activeCredential } from "../../../machines/node/node-state.ts";
import type { NodeEvent } from "../../../src/events/catalog/node-events.ts";
import { deciderSpec } from "../../support/decider-spec.ts";
import { computeInfo } from "../../support/fixtures.ts";

const ID = "node-1";
const info = computeInfo(ID);
const KEY_A = `U${"A".repeat(55)}`;
const KEY_B = `U${"B".repeat(55)}`;
const registered: NodeEvent = {
  type: "NodeRegistered",
  data: { NodeID: ID, NodeType: "Compute", Info: info, Membership: "APPROVED", Lifecycle: 1 },
};
const bound = (key: string, reinstated = false): NodeEvent => ({
  type: "NodeCredentialBound",
  data: { NodeID: ID, PublicKey: key, Reinstated: reinstated },
});
const revoked = (key: string, reason: "rejected" | "deleted"): NodeEvent => ({
  type: "NodeCredentialRevoked",
  data: { NodeID: ID, PublicKey: key, Reason: reason },
});
const rejected: NodeEvent = { type: "NodeRejected", data: { NodeID: ID, Previous: "APPROVED" } };
const deleted: NodeEvent = { type: "NodeDeleted", data: { NodeID: ID, Membership: "APPROVED" } };
const join = (publicKey: string): NodeCommand => ({ type: "Register", info, manualApproval: false, publicKey });

const spec = deciderSpec(nodeDecider, ID);
const given = (...history: NodeEvent[]) => {
  const g = spec(history);
  return { when: (command: NodeCommand) => g.when(command).decision, credential: () => activeCredential(g.state) };
};

describe("node credentials: given / when / then", () => {
  it("binds the joining key when a node registers", () => {
    expect(given().when(join(KEY_A))).toEqual({
      ok: true,
      events: [{ ...registered }, bound(KEY_A)],
      note: "node registered",
    });
    expect(given(registered, bound(KEY_A)).credential()).toBe(KEY_A);
  });

  it("answers a repeated join with the same key without writing anything", () => {
    expect(given(registered, bound(KEY_A)).when(join(KEY_A))).toEqual({
      ok: true,
      events: [],
      note: "node already registered",
    });
  });

  it("refuses another key for a node whose key is live: the join token cannot take over a node", () => {
    expect(given(registered, bound(KEY_A)).when(join(KEY_B))).toEqual({
      ok: false,
      refusal: {
        code: "Conflict",
        message:
          "node node-1 is already bound to another key; an operator must delete the node before it can join with a new one",
      },
    });
  });

  it("binds a key to a node registered before credentials existed", () => {
    expect(given(registered).when(join(KEY_A))).toEqual({
      ok: true,
      events: [bound(KEY_A)],
      note: "node already registered",
    });
  });

  it("revokes the key when an operator rejects the node, and refuses its joins", () => {
    expect(given(registered, bound(KEY_A)).when({ type: "Reject" })).toEqual({
      ok: true,
      events: [rejected, revoked(KEY_A, "rejected")],
    });
    expect(given(registered, bound(KEY_A), rejected, revoked(KEY_A, "rejected")).credential()).toBeUndefined();
    expect(given(registered, bound(KEY_A), rejected, revoked(KEY_A, "rejected")).when(join(KEY_A))).toEqual({
      ok: false,
      refusal: { code: "Rejected", message: "node has been rejected" },
    });
  });

  it("reinstates the revoked key when an operator approves the rejected node", () => {
    const history = [registered, bound(KEY_A), rejected, revoked(KEY_A, "rejected")];
    expect(given(...history).when({ type: "Approve" })).toEqual({
      ok: true,
      events: [{ type: "NodeApproved", data: { NodeID: ID, Previous: "REJECTED" } }, bound(KEY_A, true)],
    });
    expect(
      given(
        ...history,
        { type: "NodeApproved", data: { NodeID: ID, Previous: "REJECTED" } },
        bound(KEY_A, true),
      ).credential(),
    ).toBe(KEY_A);
  });

  it("revokes the key before deleting the node; a new lifecycle may join with a new key", () => {
    expect(given(registered, bound(KEY_A)).when({ type: "Delete" })).toEqual({
      ok: true,
      events: [revoked(KEY_A, "deleted"), deleted],
    });
    const after = given(registered, bound(KEY_A), revoked(KEY_A, "deleted"), deleted);
    expect(after.credential()).toBeUndefined();
    expect(after.when(join(KEY_B))).toMatchObject({
      ok: true,
      events: [{ type: "NodeRegistered", data: { Lifecycle: 2 } }, bound(KEY_B)],
    });
  });

  it("deletes and rejects nodes without a key without inventing a revocation", () => {
    expect(given(registered).when({ type: "Delete" })).toEqual({ ok: true, events: [deleted] });
    expect(given(registered).when({ type: "Reject" })).toEqual({ ok: true, events: [rejected] });
  });
});
