import { describe, expect, it } from "vitest";
import { isoToLocal, localToIso } from "../../../ui/src/audit/moment.ts";
import { returnPath, signInHref } from "../../../ui/src/session/return-path.ts";

describe("returning after sign-in", () => {
  it("comes back to the console page asked for, its query included", () => {
    expect(signInHref("/ui/jobs?order_by=id")).toBe("/ui/sign-in?next=%2Fui%2Fjobs%3Forder_by%3Did");
    expect(returnPath(decodeURIComponent("%2Fui%2Fjobs%3Forder_by%3Did"))).toBe("/ui/jobs?order_by=id");
    expect(signInHref("/ui/sign-in?next=%2Fui%2Faudit")).toBe("/ui/sign-in?next=%2Fui%2Faudit");
  });

  it("goes nowhere but the console's own pages", () => {
    for (const next of [undefined, "", "https://evil.example/ui/", "//evil.example/ui/", "/ui//evil", "/ui/\\evil"])
      expect(returnPath(next), String(next)).toBe("/ui/nodes");
    expect(returnPath("/ui/sign-in?next=/ui/jobs")).toBe("/ui/nodes");
    expect(returnPath("/api/v1/orchestrator/nodes")).toBe("/ui/nodes");
    // Judged as the browser resolves the path: dot segments, written plainly or escaped, may not leave the console.
    for (const next of ["/ui/../api/v1/agent/config", "/ui/%2e%2e/api/v1/agent/config", "/ui/jobs/../../api", "/ui/.."])
      expect(returnPath(next), next).toBe("/ui/nodes");
    expect(returnPath("/ui/jobs/../sign-in")).toBe("/ui/nodes");
    expect(returnPath("/ui/jobs/./../audit?from=1#top")).toBe("/ui/audit?from=1#top");
  });
});

describe("the feed's times in the address", () => {
  it("keeps them as instants, shown in the reader's local time", () => {
    const local = "2026-11-30T09:15:07";
    expect(isoToLocal(localToIso(local))).toBe(local);
    expect(isoToLocal("")).toBe("");
    expect(isoToLocal("not a time")).toBe("");
  });
});
