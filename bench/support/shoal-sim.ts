import type { FleetProgress } from "../../src/sim/virtual-fleet.ts";
import { startChild, type RunningChild } from "./child-process.ts";

const SHOAL = new URL("../../bin/shoal", import.meta.url).pathname;

export interface SimFleet {
  readonly process: RunningChild;
  /** Its last `sim progress` line (it prints one a second). */
  progress(): FleetProgress | undefined;
  /** Why it stopped, when it stopped on its own. */
  exited(): string | undefined;
}

/**
 * `shoal sim --run-work` as a user starts it (bin/shoal, its own process, JSON logs): `nodes`
 * virtual nodes `<prefix>-<index>` joining over the real protocol with the join token in
 * `tokenFile`, each running its work in memory for `runMs` unless the task says otherwise.
 */
export async function startSimFleet(options: {
  readonly nodes: number;
  readonly prefix: string;
  readonly natsUrl: string;
  readonly tokenFile: string;
  readonly joinRatePerSecond: number;
  readonly heartbeatMs: number;
  readonly runMs: number;
}): Promise<SimFleet> {
  const args = [
    "sim",
    ...["--nodes", String(options.nodes), "--id-prefix", options.prefix],
    ...["--orchestrator", options.natsUrl, "--token-file", options.tokenFile],
    ...["--join-rate", `${options.joinRatePerSecond}/s`, "--heartbeat-interval", `${options.heartbeatMs}ms`],
    ...["--run-work", "--run-time", `${options.runMs}ms`],
    ...["-c", "Logging.Mode=json"],
  ];
  const process = await startChild(SHOAL, args, '"sim progress"', 60_000);
  return {
    process,
    progress: () => {
      const out = process.output();
      const at = out.lastIndexOf('"sim progress"');
      if (at < 0) return undefined;
      const start = out.lastIndexOf("\n", at) + 1;
      const end = out.indexOf("\n", at);
      if (end < 0) {
        // The last line is still being written: the one before it is whole.
        const previous = out.lastIndexOf('"sim progress"', start - 1);
        if (previous < 0) return undefined;
        const from = out.lastIndexOf("\n", previous) + 1;
        return JSON.parse(out.slice(from, out.indexOf("\n", previous))) as FleetProgress;
      }
      return JSON.parse(out.slice(start, end)) as FleetProgress;
    },
    exited: () => {
      const child = process.child;
      if (child.exitCode === null && child.signalCode === null) return undefined;
      return `shoal sim exited (code ${child.exitCode}, signal ${child.signalCode}): ${process.output().slice(-1500)}`;
    },
  };
}
