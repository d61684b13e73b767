import { readFileSync } from "node:fs";
import { arch, platform } from "node:os";

const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string };

export const SHOAL_VERSION: string = pkg.version;

/** Shaped like Bacalhau's BuildVersionInfo, so its clients can read it. */
export function buildVersion() {
  const [major = "0", minor = "0"] = SHOAL_VERSION.split(".");
  return { Major: major, Minor: minor, GitVersion: `v${SHOAL_VERSION}`, GOOS: platform(), GOARCH: arch() };
}
