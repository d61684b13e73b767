import { describe, expect, it } from "vitest";
import {
  decodeForwardedAnswer,
  decodeForwardedCommand,
  encodeForwardedAnswer,
  encodeForwardedCommand,
  type ForwardedCommand,
} from "../../../src/cluster/forwarded-command.ts";
import { encode, ProtocolError } from "../../../src/transport/codec.ts";

const cordon: ForwardedCommand = {
  Command: "update-node",
  Entity: "c-1",
  Args: { Action: "cordon", Message: "disk swap" },
  From: "orch-b",
  Actor: { Type: "operator", ID: "alice" },
  Reason: "disk swap",
  CorrelationID: "req-7",
  CausationID: "9b0c",
  ExpectedRevision: 3,
};

const refusal = (bytes: Uint8Array): string => {
  try {
    decodeForwardedCommand(bytes);
  } catch (e) {
    expect(e).toBeInstanceOf(ProtocolError);
    return (e as Error).message;
  }
  throw new Error("decoded");
};

describe("a command forwarded to its entity's owner", () => {
  it("arrives as it was sent: the command, its arguments, the REST user, the reason, the ids and If-Match", () => {
    expect(decodeForwardedCommand(encodeForwardedCommand(cordon))).toEqual(cordon);
    const { Reason: _r, ExpectedRevision: _e, ...bare } = cordon;
    expect(decodeForwardedCommand(encodeForwardedCommand(bare))).toEqual(bare);
  });

  it("is refused, naming what is wrong, when a field is missing, unknown or of the wrong type, or it is garbage", () => {
    const { Actor: _a, ...anonymous } = cordon;
    expect(refusal(encode(anonymous))).toContain("Actor");
    expect(refusal(encode({ ...cordon, Actor: { Type: "root", ID: "x" } }))).toContain("Type");
    expect(refusal(encode({ ...cordon, Lease: { partition: 1, epoch: 2 } }))).toContain("Lease");
    expect(refusal(encode({ ...cordon, ExpectedRevision: 1.5 }))).toContain("ExpectedRevision");
    expect(refusal(encode({ ...cordon, Entity: "" }))).toContain("Entity");
    expect(refusal(new Uint8Array([0xa5, 0x68]))).toContain("not valid MessagePack");
    expect(refusal(encode("cordon c-1"))).toContain("Expected");
  });

  it("answers with what was stored, or with a refusal of the closed error set", () => {
    const done = { Done: { Position: 41, Revision: 4, Note: "node already cordoned", Changed: false } };
    expect(decodeForwardedAnswer(encodeForwardedAnswer(done))).toEqual(done);
    const refused = { Refused: { Kind: "PreconditionFailed" as const, Message: "node c-1 is at revision 4" } };
    expect(decodeForwardedAnswer(encodeForwardedAnswer(refused))).toEqual(refused);
    expect(() => decodeForwardedAnswer(encode({ Refused: { Kind: "Teapot", Message: "?" } }))).toThrow(/Kind/);
    expect(() => decodeForwardedAnswer(encode({ Done: { Position: -1, Changed: true } }))).toThrow(/Position/);
  });
});
