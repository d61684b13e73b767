import { Schema } from "effect";
import { describe, expect, it } from "vitest";
import { ShoalError } from "../../../src/errors/shoal-error.ts";
import { readableIssues, validate } from "../../../src/api/validate.ts";

const Query = Schema.Struct({
  order_by: Schema.optional(Schema.Literal("created_at", "modified_at", "id", "")),
  limit: Schema.optional(
    Schema.String.pipe(
      Schema.pattern(/^[0-9]+$/, { message: () => "must be a whole number written in decimal digits" }),
    ),
  ),
  reverse: Schema.optional(Schema.Literal("true", "false")),
});

function refusal(input: unknown): { message: string; issues: unknown } {
  try {
    validate(Query, input, "query");
  } catch (e) {
    if (e instanceof ShoalError) return { message: e.message, issues: e.details?.issues };
    throw e;
  }
  throw new Error("accepted");
}

describe("validate: one message per problem", () => {
  it("a choice of literals says what it may be, once; an optional field's 'Expected undefined' is not said", () => {
    const got = refusal({ order_by: "bogus", limit: "-1" });
    expect(got.issues).toEqual([
      { path: "order_by", message: 'must be one of "created_at", "modified_at", "id", got "bogus"' },
      { path: "limit", message: "must be a whole number written in decimal digits" },
    ]);
    expect(got.message).toBe(
      'invalid query: order_by: must be one of "created_at", "modified_at", "id", got "bogus"; limit: must be a whole number written in decimal digits',
    );
  });

  it("keeps unknown fields and single mismatches as Effect says them", () => {
    const got = refusal({ nope: "1" });
    expect(got.issues).toEqual([
      { path: "nope", message: 'is unexpected, expected: "order_by" | "limit" | "reverse"' },
    ]);
    expect(readableIssues([{ path: "a", message: 'Expected "x", actual "y"' }])).toEqual([
      { path: "a", message: 'Expected "x", actual "y"' },
    ]);
  });
});

describe("a body that is not a JSON object", () => {
  const message = (schema: Schema.Schema.Any, input: unknown): string => {
    try {
      validate(schema as Schema.Schema<unknown, unknown>, input, "request body");
    } catch (e) {
      expect(e).toBeInstanceOf(ShoalError);
      expect((e as ShoalError).kind).toBe("BadRequest");
      return (e as ShoalError).message;
    }
    throw new Error("accepted");
  };

  it("is refused in one sentence naming the fields the body needs, not with the struct's type", async () => {
    const { PutJobRequest, StopJobRequest } = await import("../../../src/api/jobs/job-routes.ts");
    const { RerunJobRequest } = await import("../../../src/api/jobs/job-version-routes.ts");
    const { RevokeLeafLoginsRequest } = await import("../../../src/api/leaves/leaf-routes.ts");
    for (const input of [[], [{ Job: {} }], "job", 7, true]) {
      expect(message(PutJobRequest, input)).toBe("the request body must be a JSON object with Job");
    }
    expect(message(StopJobRequest, [])).toBe("the request body must be a JSON object");
    expect(message(RerunJobRequest, "x")).toBe("the request body must be a JSON object");
    expect(message(RevokeLeafLoginsRequest, [])).toBe("the request body must be a JSON object with Keys");
    // An object goes on to the field checks; an absent body is an empty one.
    expect(message(RevokeLeafLoginsRequest, {})).toMatch(/^invalid request body: Keys: /);
    expect(message(RevokeLeafLoginsRequest, undefined)).toMatch(/^invalid request body: Keys: /);
  });
});
