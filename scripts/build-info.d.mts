/** The commit and its time a build is stamped with (build-info.mjs); each absent when unknown. */
export function buildInfo(
  root: string,
  env?: Readonly<Record<string, string | undefined>>,
): { GitCommit?: string; BuildDate?: string };
