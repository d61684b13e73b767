import { createReadStream } from "node:fs";
import { appendFile, lstat, mkdir, readdir, rename, stat } from "node:fs/promises";
import { join } from "node:path";
import { RESULT_OUTPUT_FILES } from "../../events/catalog/publisher-types.ts";
import { DownloadError } from "./download-error.ts";

const EXIT_CODE = "exitCode";

const exists = (path: string) =>
  lstat(path).then(
    () => true,
    (e: NodeJS.ErrnoException) => {
      if (e.code === "ENOENT") return false;
      throw e;
    },
  );

/**
 * Moves one unpacked result (`from`) into the merged tree `to` as Bacalhau's downloader merges results: directories
 * merged; with several results (`append`), stdout and stderr appended one after another, and exitCode too, one code a
 * line (Bacalhau appends the codes with nothing between, so two zeros would read 00); any other file that an earlier
 * result wrote is refused, pointing at --raw.
 */
export async function mergeResult(from: string, to: string, append: boolean, under = ""): Promise<void> {
  for (const entry of await readdir(join(from, under), { withFileTypes: true })) {
    const relative = under === "" ? entry.name : join(under, entry.name);
    const target = join(to, relative);
    if (entry.isDirectory()) {
      if ((await exists(target)) && !(await stat(target)).isDirectory()) throw twice(relative);
      await mkdir(target, { recursive: true });
      await mergeResult(from, to, append, relative);
      continue;
    }
    const output = under === "" && (RESULT_OUTPUT_FILES as readonly string[]).includes(entry.name);
    if (append && output) {
      // Created even when empty, as a single result's is.
      await appendFile(target, entry.name === EXIT_CODE && (await exists(target)) ? "\n" : "");
      for await (const chunk of createReadStream(join(from, relative))) await appendFile(target, chunk as Buffer);
      continue;
    }
    if (await exists(target)) throw twice(relative);
    await rename(join(from, relative), target);
  }
}

const twice = (relative: string) =>
  new DownloadError(
    `cannot merge results as output already exists: ${relative} is in more than one of them. ` +
      "Use --raw to download each result on its own",
  );
