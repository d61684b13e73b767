import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { buildInfo } from "../../../scripts/build-info.mjs";
import { tempDir } from "../../support/fixtures.ts";

const COMMIT = "d612b63108f2b5ce1ab2b9e02444eb1dac1d922d";
const root = process.cwd();

describe("the build's stamp (GitCommit, BuildDate)", () => {
  it("is the checkout's commit and its time in UTC, as Go's vcs.revision and vcs.time", () => {
    const git = (...args: string[]) => execFileSync("git", args, { cwd: root, encoding: "utf8" }).trim();
    const info = buildInfo(root, {});
    expect(info.GitCommit).toBe(git("rev-parse", "HEAD"));
    expect(info.BuildDate).toBe(new Date(git("log", "-1", "--format=%cI")).toISOString().replace(".000Z", "Z"));
  });

  it("is empty outside a checkout (the orchestrator answers Go's values then)", () => {
    expect(buildInfo(tempDir(), {})).toEqual({});
  });

  it("takes SHOAL_GIT_COMMIT and SHOAL_BUILD_DATE over git, the time in UTC", () => {
    expect(buildInfo(root, { SHOAL_GIT_COMMIT: COMMIT, SHOAL_BUILD_DATE: "2022-11-16T15:03:31+01:00" })).toEqual({
      GitCommit: COMMIT,
      BuildDate: "2022-11-16T14:03:31Z",
    });
    expect(buildInfo(root, { SHOAL_GIT_COMMIT: COMMIT })).toEqual({ GitCommit: COMMIT });
  });

  it("refuses a malformed one, so no build carries it", () => {
    expect(() => buildInfo(root, { SHOAL_GIT_COMMIT: "d612b63" })).toThrow("SHOAL_GIT_COMMIT must be a full commit id");
    expect(() => buildInfo(root, { SHOAL_BUILD_DATE: "yesterday" })).toThrow("SHOAL_BUILD_DATE must be an RFC 3339");
  });
});
