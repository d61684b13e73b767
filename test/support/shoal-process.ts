import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";

export const SHOAL_BIN = join(import.meta.dirname, "../../bin/shoal");

/**
 * The environment of a `bin/shoal` a test starts: plain HTTP unless `env` says otherwise (`serve` and the CLI alike
 * read SHOAL_API_TLS_DISABLE), as the tests fetch the API themselves; the API's TLS is tested with
 * SHOAL_API_TLS_DISABLE=false (test/e2e/api-tls.test.ts). Plain NATS too, as the tests' own NATS clients trust no
 * CA; NATS's TLS is tested with SHOAL_ORCHESTRATOR_NATS_TLS_DISABLE=false (test/e2e/nats-tls.test.ts).
 */
export const shoalEnv = (env: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv => ({
  ...process.env,
  SHOAL_API_TLS_DISABLE: "true",
  SHOAL_ORCHESTRATOR_NATS_TLS_DISABLE: "true",
  ...env,
});

/** A `bin/shoal` process started as a user would start it. */
export class ShoalProcess {
  stdout = "";
  stderr = "";
  readonly exited: Promise<number | null>;
  private closed = false;

  private constructor(readonly child: ChildProcess) {
    child.stdout?.on("data", (d: Buffer) => (this.stdout += d.toString()));
    child.stderr?.on("data", (d: Buffer) => (this.stderr += d.toString()));
    this.exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
    child.once("close", () => (this.closed = true));
  }

  static start(args: string[], env: Record<string, string> = {}): ShoalProcess {
    return new ShoalProcess(spawn(SHOAL_BIN, args, { env: shoalEnv(env), stdio: ["ignore", "pipe", "pipe"] }));
  }

  /** Until `text` is printed; a process that exited first fails it at once, with its exit and the end of its log. */
  async waitForOutput(text: string, timeoutMs = 30_000): Promise<void> {
    const unprinted = () => `"${text}" not printed; stdout: ${this.stdout}\nstderr: ${this.stderr.slice(-2000)}`;
    await waitFor(
      () => {
        if (this.stdout.includes(text)) return true;
        // After "close", not "exit": by then everything it printed has been read.
        if (this.closed) throw new Error(`exited (${this.child.exitCode ?? this.child.signalCode}): ${unprinted()}`);
        return false;
      },
      timeoutMs,
      unprinted,
    );
  }

  kill(signal: NodeJS.Signals = "SIGKILL"): Promise<number | null> {
    this.child.kill(signal);
    return this.exited;
  }
}

/** Runs `bin/shoal …` to completion. */
export function runShoal(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const p = ShoalProcess.start(args, env);
  return p.exited.then((code) => ({ code, stdout: p.stdout, stderr: p.stderr }));
}

export async function waitFor(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  describe: () => string = () => "condition",
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs}ms waiting for ${describe()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
