import { randomUUID } from "node:crypto";
import { mkdir, open, rm } from "node:fs/promises";
import { posix } from "node:path";
import { formatExactBytes } from "../../config/byte-size.ts";
import { formatDuration } from "../../config/duration.ts";
import { badRequest, ShoalError, unavailable } from "../../errors/shoal-error.ts";

export interface DownloadLimits {
  /** The most bytes one download may bring (InputSources.MaxDownloadSize). */
  readonly maxBytes: number;
  /** The most time one download may take, from the request to its last byte (InputSources.ReadTimeout). */
  readonly timeoutMs: number;
}

/** A file name from a Content-Disposition header (filename* first), when it holds one. */
function dispositionName(header: string | null): string | undefined {
  if (header === null) return undefined;
  const star = /filename\*\s*=\s*[^']*'[^']*'([^;]+)/i.exec(header);
  if (star?.[1] !== undefined) {
    try {
      return decodeURIComponent(star[1].trim());
    } catch {
      return undefined;
    }
  }
  return /filename\s*=\s*"?([^";]+)"?/i.exec(header)?.[1]?.trim();
}

/** A name that stays one file in `dir`: its last component, never `.`, `..` or empty. */
function safeName(name: string | undefined): string | undefined {
  const base = name === undefined ? "" : posix.basename(name.replace(/\\/g, "/"));
  return base === "" || base === "." || base === ".." || base.includes("\u0000") ? undefined : base;
}

/**
 * Bacalhau's urldownload PrepareStorage: the file at `url` fetched into `dir` (created), named after
 * the last component of the URL it came from (after redirects; a redirect's Content-Disposition
 * name first), a random name when it has none. Fails with a ShoalError (the HTTP status, the limit
 * passed, the network failure) and leaves no partial file.
 */
export async function downloadUrl(
  url: string,
  dir: string,
  limits: DownloadLimits,
  signal?: AbortSignal,
): Promise<{ path: string; name: string }> {
  const deadline = AbortSignal.timeout(limits.timeoutMs);
  const abort = signal === undefined ? deadline : AbortSignal.any([signal, deadline]);
  const timedOut = () =>
    badRequest(
      `download from URL (${url}) did not finish within ${formatDuration(limits.timeoutMs)} (InputSources.ReadTimeout)`,
    );
  const tooLarge = (bytes?: number) =>
    new ShoalError({
      kind: "PayloadTooLarge",
      message:
        `download from URL (${url}) is ${bytes === undefined ? "more than" : `${bytes} bytes, more than`} ` +
        `the ${formatExactBytes(limits.maxBytes)} this node takes (InputSources.MaxDownloadSize)`,
    });
  let response: Response;
  try {
    response = await fetch(url, { redirect: "follow", signal: abort });
  } catch (e) {
    if (deadline.aborted) throw timedOut();
    throw unavailable(`failed to begin download from url ${url}: ${causeOf(e)}`);
  }
  if (response.status < 200 || response.status >= 300) {
    await response.body?.cancel().catch(() => undefined);
    throw badRequest(`non-200 response from URL (${url}): ${response.status} ${response.statusText}`.trimEnd());
  }
  const declared = Number(response.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > limits.maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw tooLarge(declared);
  }
  let fromPath: string | undefined;
  try {
    fromPath = decodeURIComponent(new URL(response.url || url).pathname);
  } catch {
    fromPath = undefined;
  }
  const fromHeader = response.redirected
    ? safeName(dispositionName(response.headers.get("content-disposition")))
    : undefined;
  const name = fromHeader ?? safeName(fromPath) ?? randomUUID();
  await mkdir(dir, { recursive: true });
  const path = posix.join(dir, name);
  const file = await open(path, "w", 0o644);
  let written = 0;
  try {
    if (response.body !== null) {
      for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
        written += chunk.byteLength;
        if (written > limits.maxBytes) throw tooLarge();
        await file.write(chunk);
      }
    }
    await file.sync();
  } catch (e) {
    await file.close().catch(() => undefined);
    await rm(path, { force: true });
    if (e instanceof ShoalError) throw e;
    if (deadline.aborted) throw timedOut();
    throw unavailable(`failed to write the download from URL (${url}) to ${path}: ${causeOf(e)}`);
  }
  await file.close();
  return { path, name };
}

/** fetch's "fetch failed" says nothing: its cause (ECONNREFUSED, ENOTFOUND, …) does. */
function causeOf(e: unknown): string {
  const cause = (e as { cause?: unknown }).cause;
  if (cause instanceof Error) return cause.message;
  return e instanceof Error ? e.message : String(e);
}
