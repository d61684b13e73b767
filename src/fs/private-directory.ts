import { chmodSync, existsSync, mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { StartupError } from "../errors/startup-error.ts";

/**
 * Makes `dir` (created if need be) readable by its owner only, and says what its mode was if it
 * changed. A directory shared by design (the sticky bit, as /tmp) or another user's is refused,
 * before anything is written: making it 0700 would lock others out of it, and leaving it would
 * leave the secrets' names and the directory's content to others. `flag` names the option that gave it;
 * `example` is the subdirectory suggested instead of a shared one.
 */
export function privateDirectory(dir: string, flag: string, example: string): number | undefined {
  const existed = existsSync(dir);
  if (existed && !statSync(dir).isDirectory()) throw new StartupError(`${flag}: ${dir} is not a directory`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stat = statSync(dir);
  if (stat.mode & 0o1000)
    throw new StartupError(
      `${flag}: ${dir} is a shared directory (sticky bit, as /tmp); give a directory of its own, such as ${join(dir, example)}`,
    );
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid)
    throw new StartupError(`${flag}: ${dir} belongs to another user (uid ${stat.uid}); give a directory of your own`);
  const mode = stat.mode & 0o7777;
  if (mode === 0o700) return undefined;
  chmodSync(dir, 0o700);
  return existed ? mode : undefined;
}
