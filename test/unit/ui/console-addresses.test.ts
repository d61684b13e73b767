import { describe, expect, it } from "vitest";
import { isoToLocal, localToIso } from "../../../ui/src/audit/moment.ts";
import { filtersFromQuery, filtersHref } from "../../../ui/src/common/url-filters.ts";
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
  });
});

describe("filters in the address", () => {
  const defaults = { namespace: "", labels: "", order_by: "created_at", reverse: "true" };
  it("writes only what differs from the defaults, and reads it back", () => {
    const filters = { ...defaults, labels: "team=a,tier!=gold", order_by: "id" };
    const href = filtersHref("/ui/jobs", filters, defaults);
    expect(href).toBe("/ui/jobs?labels=team%3Da%2Ctier%21%3Dgold&order_by=id");
    const query = Object.fromEntries(new URL(href, "https://x").searchParams);
    expect(filtersFromQuery(query, defaults)).toEqual(filters);
    expect(filtersHref("/ui/jobs", defaults, defaults)).toBe("/ui/jobs");
  });

  it("ignores parameters that are not filters", () => {
    expect(filtersFromQuery({ next: "/ui/x", namespace: "prod" }, defaults)).toEqual({
      ...defaults,
      namespace: "prod",
    });
  });

  it("keeps the feed's times as instants, shown in the reader's local time", () => {
    const local = "2026-11-30T09:15:07";
    expect(isoToLocal(localToIso(local))).toBe(local);
    expect(isoToLocal("")).toBe("");
    expect(isoToLocal("not a time")).toBe("");
  });
});
