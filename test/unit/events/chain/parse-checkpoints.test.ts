import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { auditSigningKey, checkpointSignatureValid } from "../../../../src/events/chain/audit-checkpoint.ts";
import { parseCheckpoints } from "../../../../src/events/chain/parse-checkpoints.ts";

const key = auditSigningKey(randomBytes(32));
const a = key.sign(10, "ab".repeat(32), "2026-11-29T10:00:00.000Z");
const b = key.sign(20, "cd".repeat(32), "2026-11-29T10:01:00.000Z");

describe("parseCheckpoints", () => {
  it("reads a page of the API's answer saved as it came (GET /audit/checkpoints)", () => {
    expect(parseCheckpoints(JSON.stringify({ Items: [a, b], NextToken: "" }), "f")).toEqual([a, b]);
    expect(() => parseCheckpoints(JSON.stringify({ Items: [{ ...a, position: 0 }] }), "f")).toThrow(
      "f [0]: position must be a whole number of at least 1",
    );
  });

  it("reads one object, an array, or one a line, as published", async () => {
    expect(parseCheckpoints(JSON.stringify(a), "f")).toEqual([a]);
    expect(parseCheckpoints(JSON.stringify([a, b]), "f")).toEqual([a, b]);
    expect(parseCheckpoints(`${JSON.stringify(a)}\n\n${JSON.stringify(b)}\n`, "f")).toEqual([a, b]);
    const parsed = parseCheckpoints(JSON.stringify(a), "f");
    await expect(Promise.all(parsed.map((c) => checkpointSignatureValid(c)))).resolves.toEqual([true]);
  });

  it("names the line and the field that is wrong", () => {
    expect(() => parseCheckpoints("", "f")).toThrow("f: no checkpoint in it");
    expect(() => parseCheckpoints(`${JSON.stringify(a)}\n{oops`, "f")).toThrow("f:2: not JSON");
    expect(() => parseCheckpoints(JSON.stringify({ ...a, position: 0 }), "f")).toThrow(
      "f: position must be a whole number of at least 1",
    );
    expect(() => parseCheckpoints(JSON.stringify([a, { ...b, link: "AB" }]), "f")).toThrow(
      "f [1]: link must be 64 lowercase hex digits",
    );
    const { signature: _, ...unsigned } = b;
    expect(() => parseCheckpoints(`${JSON.stringify(a)}\n${JSON.stringify(unsigned)}`, "f")).toThrow(
      "f:2: signature must be a non-empty string",
    );
  });
});

describe("checkpoint signatures", () => {
  it("hold for what was signed and for nothing changed from it", async () => {
    await expect(checkpointSignatureValid(a)).resolves.toBe(true);
    await expect(checkpointSignatureValid({ ...a, position: 11 })).resolves.toBe(false);
    await expect(checkpointSignatureValid({ ...a, link: "cd".repeat(32) })).resolves.toBe(false);
    await expect(checkpointSignatureValid({ ...a, time: "2026-11-29T10:00:00.001Z" })).resolves.toBe(false);
    await expect(
      checkpointSignatureValid({ ...a, publicKey: auditSigningKey(randomBytes(32)).publicKey }),
    ).resolves.toBe(false);
    await expect(checkpointSignatureValid({ ...a, publicKey: "not a key" })).resolves.toBe(false);
  });
});
