import { pathGlob } from "./path-glob.ts";

/** One entry of Compute.AllowListedLocalPaths: a path pattern, and whether executions may write there. */
export interface AllowedPath {
  readonly pattern: string;
  readonly readWrite: boolean;
  readonly matches: RegExp;
}

/** Bacalhau's ParseAllowPath: a `:rw` suffix allows writing, `:ro` (or none) reading only. */
export function parseAllowedPath(entry: string): AllowedPath {
  const rw = entry.endsWith(":rw");
  const pattern = rw || entry.endsWith(":ro") ? entry.slice(0, -3) : entry;
  return { pattern, readWrite: rw, matches: pathGlob(pattern) };
}

/**
 * Bacalhau's matchAllowedPath: the first entry whose pattern matches the path and grants the
 * access asked for lets it through; when only read-only entries match a read-write ask, the
 * volume is not granted write access; when none match, it is not allowlisted. Undefined: allowed.
 */
export function localPathRefusal(
  allowed: readonly AllowedPath[],
  path: string,
  readWrite: boolean,
): string | undefined {
  let readOnlyMatch = false;
  for (const entry of allowed) {
    if (!entry.matches.test(path)) continue;
    if (readWrite && !entry.readWrite) {
      readOnlyMatch = true;
      continue;
    }
    return undefined;
  }
  const why = readOnlyMatch ? "is not granted write access" : "is not allowlisted";
  return `volume ${path} ${why} (verify the node's Compute.AllowListedLocalPaths)`;
}
