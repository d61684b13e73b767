import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { waitFor } from "../shoal-process.ts";

const MAIN = join(import.meta.dirname, "stand-in-main.ts");

/** The KurrentDB stand-in in a child process (stand-in-main.ts): it outlives any orchestrator a test kills. */
export class StandInProcess {
  private constructor(
    private readonly child: ChildProcess,
    /** The connection string EventStore.URL takes. */
    readonly url: string,
  ) {}

  static async start(): Promise<StandInProcess> {
    const child = spawn(process.execPath, ["--import", "tsx", MAIN], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    const listening = () => /listening (\S+)/.exec(out)?.[1];
    await waitFor(
      () => listening() !== undefined || child.exitCode !== null,
      30_000,
      () => `the KurrentDB stand-in to listen; stderr: ${err.slice(-2000)}`,
    );
    const url = listening();
    if (url === undefined) throw new Error(`the KurrentDB stand-in exited (${child.exitCode}): ${err.slice(-2000)}`);
    return new StandInProcess(child, url);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    this.child.kill("SIGKILL");
    await exited;
  }
}
