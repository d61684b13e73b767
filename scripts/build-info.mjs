// What the build stamps into dist/build-info.json, which /api/v1/agent/version answers as GitCommit and BuildDate,
// as a Go build stamps Bacalhau (vcs.revision and vcs.time: the commit and its time in UTC). From the environment
// (SHOAL_GIT_COMMIT, SHOAL_BUILD_DATE: a build without the repository, such as the Dockerfile's), else from git when
// building in a checkout; what neither gives is left out, and src/version.ts answers Go's values for it.
import { spawnSync } from "node:child_process";
import process from "node:process";

const COMMIT = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/** RFC 3339 in UTC without fractions, as Go writes a commit time; undefined for what is no time. */
function utc(text) {
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

function fromGit(root) {
  const git = (...args) => spawnSync("git", args, { cwd: root, encoding: "utf8" });
  const commit = git("rev-parse", "HEAD");
  const time = git("log", "-1", "--format=%cI", "HEAD");
  if (commit.status !== 0 || time.status !== 0) return {};
  const GitCommit = commit.stdout.trim();
  const BuildDate = utc(time.stdout.trim());
  return COMMIT.test(GitCommit) && BuildDate !== undefined ? { GitCommit, BuildDate } : {};
}

/** The stamp for a build of the checkout at `root`; a malformed SHOAL_* value stops the build. */
export function buildInfo(root, env = process.env) {
  const { SHOAL_GIT_COMMIT: commit, SHOAL_BUILD_DATE: date } = env;
  if (!commit && !date) return fromGit(root);
  if (commit && !COMMIT.test(commit)) throw new Error(`SHOAL_GIT_COMMIT must be a full commit id, got ${commit}`);
  if (date && utc(date) === undefined) throw new Error(`SHOAL_BUILD_DATE must be an RFC 3339 time, got ${date}`);
  return { ...(commit ? { GitCommit: commit } : {}), ...(date ? { BuildDate: utc(date) } : {}) };
}
