import { execFileSync } from "node:child_process";
import { join } from "node:path";

/**
 * Vitest global setup: tests that spawn `bin/shoal` run the compiled CLI in dist/, so dist/ is
 * rebuilt before any test runs whenever src/ or machines/ changed since the last build (a
 * content hash; a fresh build costs nothing). `npx vitest run test/e2e/…` after an edit tests the edit.
 */
export default function buildOnce(): void {
  execFileSync(process.execPath, [join(import.meta.dirname, "../../scripts/build.mjs"), "--if-stale"], {
    stdio: "inherit",
  });
}
