import { describe, expect, it } from "vitest";
import { matchesLabels, parseLabelSelector } from "../../../src/labels/label-selector.ts";

const labels = { zone: "a", tier: "gpu", env: "prod" };
const matches = (selector: string) => matchesLabels(parseLabelSelector(selector), labels);

describe("label selectors", () => {
  it("supports =, ==, !=, in, notin, exists and !exists, ANDed by commas", () => {
    expect(matches("zone=a")).toBe(true);
    expect(matches("zone==b")).toBe(false);
    expect(matches("zone!=b")).toBe(true);
    expect(matches("missing!=x")).toBe(true);
    expect(matches("env in (prod, test)")).toBe(true);
    expect(matches("env notin (prod)")).toBe(false);
    expect(matches("tier")).toBe(true);
    expect(matches("!tier")).toBe(false);
    expect(matches("zone=a,env in (prod,test),!missing")).toBe(true);
    expect(matches("zone=a,tier=cpu")).toBe(false);
    expect(matches("")).toBe(true);
  });

  it("refuses malformed selectors", () => {
    for (const bad of ["zone in (a", "zone=a,", "=a", "zone=a b", "zone in a)"]) expect(() => parseLabelSelector(bad), bad).toThrow();
  });
});

describe("label selectors and the label rule", () => {
  it("take keys and values by the same rule as labels", () => {
    expect(parseLabelSelector("example.com/zone=a").requirements).toEqual([{ key: "example.com/zone", op: "in", values: ["a"] }]);
    expect(() => parseLabelSelector(`${"a".repeat(64)}=x`)).toThrow(/longer than 63/);
    expect(() => parseLabelSelector("Example.com/zone=x")).toThrow(/DNS subdomain/);
    expect(() => parseLabelSelector(`zone in (a, ${"b".repeat(64)})`)).toThrow(/label value "b+" is longer than 63/);
  });
});
