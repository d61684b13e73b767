import { existsSync, readFileSync } from "node:fs";
import { machinePlatform } from "./labels/go-platform.ts";

/**
 * package.json is looked up from this file's directory upwards: it is one level up from
 * src/version.ts and two from the compiled dist/src/version.js.
 */
function readPackageVersion(): string {
  let dir = new URL(".", import.meta.url);
  for (let depth = 0; depth < 4; depth++) {
    dir = new URL("..", dir);
    const candidate = new URL("package.json", dir);
    if (!existsSync(candidate)) continue;
    const pkg = JSON.parse(readFileSync(candidate, "utf8")) as { name?: string; version?: string };
    if (pkg.name === "shoal" && typeof pkg.version === "string") return pkg.version;
  }
  throw new Error(`cannot find Shoal's package.json above ${import.meta.url}`);
}

export const SHOAL_VERSION: string = readPackageVersion();

/** Shaped like Bacalhau's BuildVersionInfo, so its clients can read it. */
export function buildVersion() {
  const [major = "0", minor = "0"] = SHOAL_VERSION.split(".");
  return { Major: major, Minor: minor, GitVersion: `v${SHOAL_VERSION}`, ...machinePlatform() };
}
