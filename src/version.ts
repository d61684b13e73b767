import { existsSync, readFileSync } from "node:fs";
import { machinePlatform } from "./labels/go-platform.ts";

/**
 * The checkout's (or the installed package's) root, where package.json is: looked up from this file's directory
 * upwards, one level up from src/version.ts and two from the compiled dist/src/version.js.
 */
function findPackage(): { root: URL; version: string } {
  let dir = new URL(".", import.meta.url);
  for (let depth = 0; depth < 4; depth++) {
    dir = new URL("..", dir);
    const candidate = new URL("package.json", dir);
    if (!existsSync(candidate)) continue;
    const pkg = JSON.parse(readFileSync(candidate, "utf8")) as { name?: string; version?: string };
    if (pkg.name === "shoal" && typeof pkg.version === "string") return { root: dir, version: pkg.version };
  }
  throw new Error(`cannot find Shoal's package.json above ${import.meta.url}`);
}

const found = findPackage();
export const SHOAL_VERSION: string = found.version;

/** Go's values for a build without version control (Bacalhau's pkg/version, getBuildInformation). */
const UNSTAMPED = { GitCommit: "a".repeat(40), BuildDate: "1970-01-01T00:00:00Z" };

/**
 * The commit and its time the build stamped (scripts/build-info.mjs) into dist/build-info.json. Run from the sources
 * (the tests), the checkout's last build's, which the tests' set-up made of the same sources.
 */
function readStamp(root: URL): typeof UNSTAMPED {
  const file = new URL("dist/build-info.json", root);
  if (!existsSync(file)) return UNSTAMPED;
  const stamp = JSON.parse(readFileSync(file, "utf8")) as { GitCommit?: unknown; BuildDate?: unknown };
  return {
    GitCommit: typeof stamp.GitCommit === "string" ? stamp.GitCommit : UNSTAMPED.GitCommit,
    BuildDate: typeof stamp.BuildDate === "string" ? stamp.BuildDate : UNSTAMPED.BuildDate,
  };
}
const stamp = readStamp(found.root);

/** Bacalhau's BuildVersionInfo, its fields in its order, so its clients can read it. */
export function buildVersion() {
  const [major = "0", minor = "0"] = SHOAL_VERSION.split(".");
  return { Major: major, Minor: minor, GitVersion: `v${SHOAL_VERSION}`, ...stamp, ...machinePlatform() };
}
