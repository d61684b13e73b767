import { arch, endianness, platform } from "node:os";

/** An operating system and an architecture in Go's words (runtime.GOOS, runtime.GOARCH), as Bacalhau reports them. */
export interface GoPlatform {
  readonly GOOS: string;
  readonly GOARCH: string;
}

// Node's process.platform and process.arch words that differ from Go's; the others are the same word.
const GOOS_OF: Readonly<Record<string, string>> = { win32: "windows", cygwin: "windows", sunos: "solaris" };
const GOARCH_OF: Readonly<Record<string, string>> = { x64: "amd64", ia32: "386", mipsel: "mipsle" };

/**
 * Go's words for Node's: specs written for Bacalhau constrain on `amd64`, never on Node's `x64`.
 * Node says `ppc64` for both byte orders; Go tells them apart.
 */
export function goPlatform(nodePlatform: string, nodeArch: string, byteOrder: "BE" | "LE"): GoPlatform {
  const GOARCH = nodeArch === "ppc64" && byteOrder === "LE" ? "ppc64le" : (GOARCH_OF[nodeArch] ?? nodeArch);
  return { GOOS: GOOS_OF[nodePlatform] ?? nodePlatform, GOARCH };
}

/** This machine's, in Go's words. */
export const machinePlatform = (): GoPlatform => goPlatform(platform(), arch(), endianness());
