import { describe, expect, it } from "vitest";
import { MAX_LABELS, labelKeyProblem, labelValueProblem, labelsProblem } from "../../../src/labels/label-rule.ts";

const name63 = "a".repeat(63);

describe("label rule (Kubernetes' syntax and sizes)", () => {
  it("accepts Kubernetes label keys: an optional DNS-subdomain prefix and a qualified name", () => {
    for (const key of [
      "zone",
      "Operating-System",
      "a",
      "9",
      "my.name_x-1",
      name63,
      "example.com/zone",
      "kubernetes.io/arch",
      "a-b.c-d/X",
      `${"p".repeat(189)}/${name63}`, // 253 in all
    ]) {
      expect(labelKeyProblem(key), key).toBeUndefined();
    }
  });

  it("refuses keys Kubernetes refuses, with the reason", () => {
    const cases: [string, RegExp][] = [
      ["", /empty name/],
      ["a b", /letters, digits/],
      ["-zone", /starting and ending with a letter or digit/],
      ["zone-", /starting and ending/],
      ["zone.", /starting and ending/],
      ["a".repeat(64), /longer than 63/],
      ["/zone", /empty prefix/],
      ["example.com/", /empty name/],
      ["Example.com/zone", /prefix must be a DNS subdomain/],
      ["under_score.com/zone", /prefix must be a DNS subdomain/],
      ["-a.com/zone", /prefix must be a DNS subdomain/],
      ["a..b/zone", /prefix must be a DNS subdomain/],
      ["a/b/c", /at most one '\/'/],
      ["zone\u0000", /letters, digits/],
      ["zöne", /letters, digits/],
      [`${"p".repeat(190)}/${name63}`, /longer than 253/],
    ];
    for (const [key, reason] of cases) expect(labelKeyProblem(key), JSON.stringify(key)).toMatch(reason);
  });

  it("accepts empty values and 63-character names; refuses the rest", () => {
    for (const v of ["", "a", "linux", "v1.2.3", "x_y-z", name63]) expect(labelValueProblem(v), v).toBeUndefined();
    for (const v of ["a b", "-a", "a-", "a/b", "a".repeat(64), "é", "a\nb"])
      expect(labelValueProblem(v), v).toBeDefined();
  });

  it("caps the number of labels and names the first bad one", () => {
    const many = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, "v"]));
    expect(labelsProblem(many(MAX_LABELS))).toBeUndefined();
    expect(labelsProblem(many(MAX_LABELS + 1))).toBe(`${MAX_LABELS + 1} labels; a node may have at most ${MAX_LABELS}`);
    expect(labelsProblem({ zone: "a", "bad key": "x" })).toMatch(/label key "bad key"/);
    expect(labelsProblem({ zone: "a b" })).toMatch(/label value "a b"/);
  });

  it("quotes what the sender sent safely: control characters escaped, long text cut", () => {
    const problem = labelKeyProblem(`evil\u001b[2J${"x".repeat(5000)}`)!;
    expect(problem).not.toContain("\u001b");
    expect(problem).toContain("\\u001b");
    expect(problem.length).toBeLessThan(300);
    expect(problem).toContain("(5008 characters)");
  });
});
