import { execFileSync } from "node:child_process";
import { closeSync, mkdirSync, openSync, rmSync, statfsSync, writeSync } from "node:fs";
import { basename, join } from "node:path";
import { tempDir } from "./fixtures.ts";

/**
 * Real filesystems for fault tests: a size-limited tmpfs that really fills up, and an ext4 image
 * (loop device, errors=remount-ro) that the kernel really turns read-only while files are open
 * for writing. Both need mount(2), i.e. root in this container (and in CI, which runs in one
 * like it). Where mount is not permitted the fault tests skip and say so; nothing here fakes a
 * full or read-only disk.
 */
function run(command: string, args: string[]): void {
  execFileSync(command, args, { stdio: ["ignore", "ignore", "pipe"] });
}

let mountable: string | undefined | null = null;

/** Undefined when mounting works here, else why not (the reason a test prints when it skips). */
export function whyCannotMount(): string | undefined {
  if (mountable !== null) return mountable;
  const dir = tempDir("shoal-mount-probe-");
  try {
    run("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", dir]);
    run("umount", [dir]);
    mountable = undefined;
  } catch (e) {
    mountable = `mount(2) is not permitted here (${(e as Error).message.split("\n")[0]}); these tests need a real full and read-only filesystem`;
  }
  rmSync(dir, { recursive: true, force: true });
  return mountable;
}

let ext4: string | undefined | null = null;

/** Undefined when an ext4 image can be mounted on a loop device and made to fail, else why not. */
export function whyCannotMountExt4(): string | undefined {
  const tmpfs = whyCannotMount();
  if (tmpfs !== undefined) return tmpfs;
  if (ext4 !== null) return ext4;
  try {
    const fs = mountExt4(8 * 1024 * 1024);
    fs.unmount();
    ext4 = undefined;
  } catch (e) {
    ext4 = `cannot mount an ext4 image on a loop device here (${(e as Error).message.split("\n")[0]}); the read-only-while-running test needs one`;
  }
  return ext4;
}

export interface ScratchFs {
  readonly dir: string;
  /** Fills every free byte with a file; returns its path. */
  fill(): string;
  /** Deletes what fill() wrote: space is back. */
  free(): void;
  freeBytes(): number;
  /** Remount read-only: refused by the kernel (EBUSY) while any file on it is open for writing. */
  remountReadOnly(): void;
  /** ext4 only: a filesystem error; with errors=remount-ro the kernel makes it read-only at once. */
  failReadOnly(): void;
  unmount(): void;
}

function scratch(dir: string, cleanup: () => void): ScratchFs {
  const filler = join(dir, "filler");
  return {
    dir,
    fill() {
      const fd = openSync(filler, "a");
      const chunk = Buffer.alloc(64 * 1024, 0xab);
      try {
        for (;;) {
          try {
            writeSync(fd, chunk);
          } catch (e) {
            if ((e as NodeJS.ErrnoException).code !== "ENOSPC") throw e;
            break;
          }
        }
        // The last partial chunk: down to the last free block.
        for (const size of [4096, 512, 1]) {
          try {
            for (;;) writeSync(fd, chunk.subarray(0, size));
          } catch (e) {
            if ((e as NodeJS.ErrnoException).code !== "ENOSPC") throw e;
          }
        }
      } finally {
        closeSync(fd);
      }
      return filler;
    },
    free() {
      rmSync(filler, { force: true });
    },
    freeBytes() {
      const s = statfsSync(dir);
      return s.bavail * s.bsize;
    },
    remountReadOnly() {
      run("mount", ["-o", "remount,ro", dir]);
    },
    failReadOnly() {
      const device = execFileSync("findmnt", ["-n", "-o", "SOURCE", dir], { encoding: "utf8" }).trim();
      execFileSync("sh", ["-c", `echo shoal-test > /sys/fs/ext4/${basename(device)}/trigger_fs_error`]);
    },
    unmount() {
      cleanup();
    },
  };
}

/**
 * Unmounts, waiting up to 2 s for exiting processes; a filesystem still busy then is an error (something kept a file
 * open).
 */
function unmountStrictly(dir: string): void {
  for (let i = 0; i < 20; i++) {
    try {
      run("umount", [dir]);
      return;
    } catch {
      execFileSync("sleep", ["0.1"]);
    }
  }
  run("umount", ["-l", dir]);
  throw new Error(`${dir} was still busy 2 s after its users should have closed it`);
}

/** Makes one file read-only in place (a read-only bind mount over it); returns the undo. */
export function bindReadOnly(file: string): () => void {
  run("mount", ["--bind", file, file]);
  run("mount", ["-o", "remount,ro,bind", file]);
  return () => unmountStrictly(file);
}

/** A tmpfs of `sizeBytes`: full means full (ENOSPC), as on a real disk. */
export function mountTmpfs(sizeBytes: number): ScratchFs {
  const dir = tempDir("shoal-tmpfs-");
  run("mount", ["-t", "tmpfs", "-o", `size=${sizeBytes}`, "tmpfs", dir]);
  return scratch(dir, () => {
    try {
      unmountStrictly(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

/** An ext4 filesystem in an image file on a loop device, mounted with errors=remount-ro. */
export function mountExt4(sizeBytes: number): ScratchFs {
  const root = tempDir("shoal-ext4-");
  const image = join(root, "fs.img");
  const dir = join(root, "mnt");
  mkdirSync(dir);
  run("truncate", ["-s", String(sizeBytes), image]);
  run("mkfs.ext4", ["-q", "-F", image]);
  run("mount", ["-o", "loop,errors=remount-ro", image, dir]);
  return scratch(dir, () => {
    try {
      unmountStrictly(dir);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
}
