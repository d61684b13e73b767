import { existsSync, lstatSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { writeFileAtomic, writeFileAtomicAsync } from "../../../src/fs/write-file-atomic.ts";
import { tempDir } from "../../support/fixtures.ts";

/**
 * The temporary sibling has a predictable name (`<path>.<pid>.tmp`): whoever can write the
 * directory could plant a symlink there. Real files, real symlinks.
 */
const writers = {
  writeFileAtomic: (path: string, text: string, mode: number) => Promise.resolve(writeFileAtomic(path, text, mode)),
  writeFileAtomicAsync: (path: string, text: string, mode: number) =>
    writeFileAtomicAsync(path, [new TextEncoder().encode(text)], mode),
};

describe.each(Object.entries(writers))("%s", (_, write) => {
  it("does not follow a symlink planted at its temporary path: the link's target keeps its content and mode", async () => {
    const dir = tempDir("shoal-atomic-");
    const victim = join(dir, "victim");
    writeFileSync(victim, "not yours\n", { mode: 0o644 });
    const path = join(dir, "secret");
    const temp = `${path}.${process.pid}.tmp`;
    symlinkSync(victim, temp);

    await write(path, "s3cret\n", 0o600);

    expect(readFileSync(victim, "utf8")).toBe("not yours\n");
    expect(statSync(victim).mode & 0o777).toBe(0o644);
    expect(readFileSync(path, "utf8")).toBe("s3cret\n");
    expect(lstatSync(path).isSymbolicLink()).toBe(false);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(existsSync(temp)).toBe(false);
  });

  it("does not follow a dangling symlink there either (it would create the file it names)", async () => {
    const dir = tempDir("shoal-atomic-");
    const elsewhere = join(dir, "created-elsewhere");
    const path = join(dir, "secret");
    symlinkSync(elsewhere, `${path}.${process.pid}.tmp`);

    await write(path, "s3cret\n", 0o600);

    expect(existsSync(elsewhere)).toBe(false);
    expect(readFileSync(path, "utf8")).toBe("s3cret\n");
  });

  it("replaces a leftover temporary file of a crashed write (same pid, as in a container) and the old content whole", async () => {
    const dir = tempDir("shoal-atomic-");
    const path = join(dir, "state");
    writeFileSync(path, "old\n");
    writeFileSync(`${path}.${process.pid}.tmp`, "half-writ");

    await write(path, "new\n", 0o644);

    expect(readFileSync(path, "utf8")).toBe("new\n");
    expect(existsSync(`${path}.${process.pid}.tmp`)).toBe(false);
  });
});
