import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";

let image: Promise<string> | undefined;

/**
 * The busybox image the Docker tests run, built by scripts/build-test-image when the engine does
 * not have it yet (nothing can be pulled here). Its reference (with the recipe's tag) is what
 * the script prints.
 */
export function dockerTestImage(): Promise<string> {
  image ??= promisify(execFile)("bash", [join(import.meta.dirname, "../../scripts/build-test-image")]).then(
    ({ stdout }) => stdout.trim(),
  );
  return image;
}
