import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * `<DataDir>/<nodeId>.registration.lock`, as Bacalhau's compute node keeps: present while the
 * node is registered, so reconnects and restarts do not register again needlessly.
 */
export class RegistrationSentinel {
  readonly path: string;

  constructor(dataDir: string, nodeId: string) {
    mkdirSync(dataDir, { recursive: true });
    this.path = join(dataDir, `${nodeId}.registration.lock`);
  }

  exists(): boolean {
    return existsSync(this.path);
  }

  write(details: Record<string, unknown>): void {
    writeFileSync(this.path, `${JSON.stringify(details, null, 2)}\n`);
  }

  remove(): void {
    rmSync(this.path, { force: true });
  }
}
