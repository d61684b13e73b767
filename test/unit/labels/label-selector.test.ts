import { describe, expect, it } from "vitest";
import { matchesLabels, parseInt64, parseLabelSelector } from "../../../src/labels/label-selector.ts";

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
    for (const bad of ["zone in (a", "zone=a,", "=a", "zone=a b", "zone in a)"])
      expect(() => parseLabelSelector(bad), bad).toThrow();
  });
});

describe("label selectors and the label rule", () => {
  it("select what stores hold: keys older Shoals accepted (an uppercase prefix) still match; syntax and sizes are checked", () => {
    expect(parseLabelSelector("example.com/zone=a").requirements).toEqual([
      { key: "example.com/zone", op: "in", values: ["a"] },
    ]);
    const old = parseLabelSelector("Example.com/zone=x");
    expect(matchesLabels(old, { "Example.com/zone": "x" })).toBe(true);
    expect(() => parseLabelSelector(`${"a".repeat(254)}=x`)).toThrow(/is not a label key/);
    expect(() => parseLabelSelector("bad key=x")).toThrow(/invalid label selector/);
    expect(() => parseLabelSelector(`zone in (a, ${"b".repeat(64)})`)).toThrow(/must be empty or up to 63/);
  });
});

describe("gt and lt requirements (job constraints)", () => {
  it("compare integers as Kubernetes does: the node's value must be an int64 too", () => {
    const gt = { requirements: [{ key: "cores", op: "gt" as const, value: 8n }], text: "" };
    const lt = { requirements: [{ key: "cores", op: "lt" as const, value: 8n }], text: "" };
    expect([
      matchesLabels(gt, { cores: "16" }),
      matchesLabels(gt, { cores: "8" }),
      matchesLabels(gt, { cores: "x" }),
      matchesLabels(gt, {}),
    ]).toEqual([true, false, false, false]);
    expect([
      matchesLabels(lt, { cores: "+7" }),
      matchesLabels(lt, { cores: "-9" }),
      matchesLabels(lt, { cores: "7.5" }),
    ]).toEqual([true, true, false]);
    expect(matchesLabels(lt, { cores: "9223372036854775808" })).toBe(false);
  });

  it("reads an int64 operand or nothing", () => {
    expect([
      parseInt64("42"),
      parseInt64("-9223372036854775808"),
      parseInt64("9223372036854775808"),
      parseInt64("4.2"),
      parseInt64(""),
    ]).toEqual([42n, -(2n ** 63n), undefined, undefined, undefined]);
  });
});
