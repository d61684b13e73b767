/**
 * A download that cannot be done as asked (a result that would overwrite a file, one larger than --max-size, one that
 * is not what its node published, a directory that cannot be written): its message is the whole story, so main.ts
 * prints it on one line, without a stack trace.
 */
export class DownloadError extends Error {
  override readonly name = "DownloadError";
}

/** A failure of the file system (no space, no permission) as a DownloadError naming where; anything else as it is. */
export function asDownloadError(e: unknown, dir: string): unknown {
  const code = (e as { code?: unknown } | undefined)?.code;
  const syscall = (e as { syscall?: unknown } | undefined)?.syscall;
  if (typeof code === "string" && typeof syscall === "string")
    return new DownloadError(`cannot write the results into ${dir}: ${(e as Error).message}`);
  return e;
}
