import { describe, expect, it } from "vitest";
import { inFlagTerms } from "../../../src/cli/in-flag-terms.ts";

describe("inFlagTerms", () => {
  const feed = "/api/v1/orchestrator/events";

  it("names the flag of a refused parameter the request sent, and leaves the rest of the message as the API said", () => {
    expect(inFlagTerms('query parameter as_of: "noon" is not …', undefined, "/nodes?as_of=noon")).toBe(
      '--as-of: "noon" is not …',
    );
    expect(inFlagTerms("query parameter to: position 9 is beyond", undefined, "/audit/diff?from=1&to=9")).toBe(
      "TO: position 9 is beyond",
    );
  });

  it("names each problem's flag in a refused query", () => {
    const body = {
      Details: {
        issues: [
          { path: "next_token", message: "next_token must be a position" },
          { path: "limit", message: "at most 1000" },
        ],
      },
    };
    expect(inFlagTerms("invalid query: next_token: …; limit: …", body, `${feed}?next_token=x&limit=5000`)).toBe(
      "--next-token: next_token must be a position; --limit: at most 1000",
    );
  });

  it("leaves a message alone when the request did not send the parameter, or the CLI has no flag for it", () => {
    for (const [message, path] of [
      ["query parameter since: bad", `${feed}?until=x`],
      ["query parameter since: bad", feed],
      ["query parameter reverse: bad", "/nodes?reverse=maybe"],
      ["invalid query: bogus: unknown", `${feed}?bogus=1`],
      ["the store is unavailable", `${feed}?since=x`],
    ] as const)
      expect(inFlagTerms(message, { Details: { issues: [{ path: "bogus", message: "unknown" }] } }, path)).toBe(
        message,
      );
  });
});
