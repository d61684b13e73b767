import { describe, expect, it } from "vitest";
import { localPathRefusal, parseAllowedPath } from "../../../src/compute/inputs/allowed-local-paths.ts";
import { pathGlob } from "../../../src/compute/inputs/path-glob.ts";

const refusal = (entries: string[], path: string, rw = false) =>
  localPathRefusal(entries.map(parseAllowedPath), path, rw);

describe("path patterns, as doublestar's PathMatch reads them", () => {
  it.each([
    ["/data", "/data", true],
    ["/data", "/data/x", false],
    ["/data/*", "/data/a", true],
    ["/data/*", "/data", false],
    ["/data/*", "/data/a/b", false],
    ["/data/**", "/data", true],
    ["/data/**", "/data/a/b/c", true],
    ["/data/**", "/database", false],
    ["/a/**/b", "/a/b", true],
    ["/a/**/b", "/a/x/y/b", true],
    ["/a/**/b", "/a/x/y/c", false],
    ["**", "/anything/at/all", true],
    ["**/b", "/x/y/b", true],
    ["/d/file*1", "/d/file-01", true],
    ["/d/file?", "/d/file10", false],
    ["/d/{in,out}", "/d/out", true],
    ["/d/{in,out}", "/d/other", false],
    ["/d/[a-c]x", "/d/bx", true],
    ["/d/[!a]x", "/d/ax", false],
    ["/d/[!a]x", "/d/bx", true],
    ["/d/a.b", "/d/axb", false],
    ["/d/\\*", "/d/*", true],
    ["/d/\\*", "/d/x", false],
    ["/path**", "/pathology", true],
    ["/path**", "/path/x", false],
  ])("%s against %s: %s", (pattern, path, expected) => {
    expect(pathGlob(pattern).test(path)).toBe(expected);
  });
});

describe("Compute.AllowListedLocalPaths", () => {
  it("reads :rw and :ro suffixes; none is read-only", () => {
    expect(["/a:rw", "/b:ro", "/c", "/d:x"].map(parseAllowedPath).map((p) => [p.pattern, p.readWrite])).toEqual([
      ["/a", true],
      ["/b", false],
      ["/c", false],
      ["/d:x", false],
    ]);
  });

  it("allows a path a pattern matches, read-only unless the entry says :rw", () => {
    expect(refusal(["/srv/data/**"], "/srv/data/set1")).toBeUndefined();
    expect(refusal(["/srv/data/**:rw"], "/srv/data/set1", true)).toBeUndefined();
    expect(refusal(["/srv/data/**", "/srv/**:rw"], "/srv/data/set1", true)).toBeUndefined();
  });

  it("refuses a path outside every pattern, and writing where only reading is allowed, as Bacalhau says it", () => {
    expect(refusal(["/srv/data"], "/srv/data/set1")).toBe(
      "volume /srv/data/set1 is not allowlisted (verify the node's Compute.AllowListedLocalPaths)",
    );
    expect(refusal([], "/srv")).toBe(
      "volume /srv is not allowlisted (verify the node's Compute.AllowListedLocalPaths)",
    );
    expect(refusal(["/srv/**:ro"], "/srv/x", true)).toBe(
      "volume /srv/x is not granted write access (verify the node's Compute.AllowListedLocalPaths)",
    );
  });
});
