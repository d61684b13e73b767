import { describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH, parseJsonBody } from "../../../src/api/json-body.ts";
import { ShoalError } from "../../../src/errors/shoal-error.ts";

function refusal(text: string): string {
  try {
    parseJsonBody(text);
  } catch (e) {
    expect(e).toBeInstanceOf(ShoalError);
    expect((e as ShoalError).kind).toBe("BadRequest");
    return (e as ShoalError).message;
  }
  throw new Error(`accepted: ${text.slice(0, 60)}`);
}

const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;

describe("parseJsonBody", () => {
  it("parses what JSON.parse parses", () => {
    expect(parseJsonBody('{"Action":"approve","Message":"m"}')).toEqual({ Action: "approve", Message: "m" });
    expect(parseJsonBody(' [1, {"a": [true, null]}, "x"] ')).toEqual([1, { a: [true, null] }, "x"]);
    expect(parseJsonBody('\ufeff{"a":1}')).toEqual({ a: 1 });
  });

  it("refuses a key given twice in one object, however it is spelled", () => {
    expect(refusal('{"a":1,"a":2}')).toMatch(/key "a" twice/);
    expect(refusal('{"a":1,"\\u0061":2}')).toMatch(/key "a" twice/);
    expect(refusal('{"x":{"b":1,"c":{},"b":2}}')).toMatch(/key "b" twice/);
    expect(refusal('[{"k":[]},{"k":1,"k":1}]')).toMatch(/key "k" twice/);
  });

  it("takes the same key in different objects, and keys or brackets inside strings", () => {
    expect(parseJsonBody('{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}]}')).toEqual({
      a: { a: { a: 1 } },
      b: [{ a: 1 }, { a: 2 }],
    });
    expect(parseJsonBody('{"a":"\\"a\\":1,{[[[","b":"}]\\\\"}')).toEqual({ a: '"a":1,{[[[', b: "}]\\" });
    expect(parseJsonBody(`{"a":"${"[".repeat(1000)}"}`)).toEqual({ a: "[".repeat(1000) });
  });

  it(`refuses nesting deeper than ${MAX_JSON_DEPTH} levels before parsing, and takes ${MAX_JSON_DEPTH}`, () => {
    expect(parseJsonBody(nested(MAX_JSON_DEPTH))).toBeInstanceOf(Array);
    expect(refusal(nested(MAX_JSON_DEPTH + 1))).toMatch(/nested deeper than 64 levels/);
    expect(refusal(nested(30_000))).toMatch(/nested deeper than 64 levels/);
    expect(refusal(`${'{"a":'.repeat(30_000)}1${"}".repeat(30_000)}`)).toMatch(/nested deeper than 64 levels/);
    // Unbalanced input is refused too (by depth or by JSON.parse), never a crash.
    expect(refusal("[".repeat(30_000))).toMatch(/nested deeper/);
  });

  it("refuses the prototype-poisoning keys Fastify's parser refuses", () => {
    expect(refusal('{"__proto__":{"admin":true}}')).toMatch(/__proto__/);
    expect(refusal('{"a":{"constructor":{"prototype":{"admin":true}}}}')).toMatch(/prototype/);
    expect(parseJsonBody('{"constructor":"x","prototype":1}')).toEqual({ constructor: "x", prototype: 1 });
  });

  it("refuses empty and malformed bodies with a reason", () => {
    expect(refusal("")).toMatch(/empty/);
    expect(refusal("  \n")).toMatch(/empty/);
    expect(refusal("{not json")).toMatch(/not valid JSON/);
    expect(refusal('{"a":1,}')).toMatch(/not valid JSON/);
    expect(refusal('"unterminated')).toMatch(/not valid JSON/);
  });
});
