import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import Docker from "dockerode";

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

/**
 * The test image under another tag (`shoal-test/busybox:<tag>`): for a job spec, another image (an update from one to
 * the other changes the spec), with nothing to build or pull.
 */
export async function dockerTestImageTagged(tag: string): Promise<string> {
  const reference = await dockerTestImage();
  const repo = reference.slice(0, reference.lastIndexOf(":"));
  await new Docker().getImage(reference).tag({ repo, tag });
  return `${repo}:${tag}`;
}
