import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localTime } from "../../src/cli/local-time.ts";
import { startComputeProcess } from "../support/compute-processes.ts";
import { dockerTestImage } from "../support/docker-test-image.ts";
import { tempDir } from "../support/fixtures.ts";
import { type Body, JobApiClient } from "../support/job-api-client.ts";
import { LocalServe } from "../support/local-serve.ts";
import { removeContainersOf } from "../support/node-containers.ts";
import { runShoal, type ShoalProcess, waitFor } from "../support/shoal-process.ts";

/**
 * `shoal node drain --monitor|--wait` and `shoal node <action> -l SELECTOR` as an operator runs them: a real `shoal
 * serve`, three real `shoal compute` agents running containers in Docker, every CLI call a `bin/shoal` process (no
 * terminal: stdin is not a TTY, so -l without --yes is refused).
 */
const KEY = "node-cli-flows-key-0123456789abcdef";
const USERS = [
  {
    Alias: "ops",
    APIKey: KEY,
    Capabilities: [{ Actions: ["read:job", "write:job", "read:node", "write:node", "read:history"] }],
  },
];
const tag = randomUUID().slice(0, 6);
const a1 = `fa1-${tag}`;
const a2 = `fa2-${tag}`;
const b = `fb-${tag}`;
const serve = new LocalServe(tempDir("shoal-ncf-orch-"), [
  `API.Auth.Users=${JSON.stringify(USERS)}`,
  "Logging.Level=warn",
]);
const client = new JobApiClient(serve.url, () => KEY);
let image = "";
const computes: ShoalProcess[] = [];

const api = () => ["--api-host", "127.0.0.1", "--api-port", String(serve.apiPort), "--api-key", KEY];
/** `shoal <group> <command> <API flags> …`: before the arguments, never after a `--`. */
const shoal = (args: string[]) => runShoal([...args.slice(0, 2), ...api(), ...args.slice(2)]);

/** PUT /nodes/{id}, which must take the action. */
async function nodeAction(id: string, body: unknown): Promise<void> {
  const res = await client.call("PUT", `/api/v1/orchestrator/nodes/${id}`, body);
  expect(res.status, res.text).toBe(200);
}
const node = async (id: string): Promise<Body> => (await client.node(id)).Node;
const executions = (jobId: string) => client.executions(jobId);
const RUNNING = 6;

/** Submits without waiting (`docker run --wait=false --id-only`), as a script would. */
async function submit(args: string[]): Promise<string> {
  const res = await shoal(["docker", "run", "--wait=false", "--id-only", "--cpu", "250m", "--memory", "32Mb", ...args]);
  expect(res.code, res.stderr).toBe(0);
  return res.stdout.trim();
}

async function runningOn(jobId: string, nodeId: string): Promise<void> {
  await waitFor(
    async () => (await executions(jobId)).some((e) => e.NodeID === nodeId && e.ComputeState.StateType === RUNNING),
    30_000,
    () => `job ${jobId} running on ${nodeId}`,
  );
}

beforeAll(async () => {
  image = await dockerTestImage();
  await serve.start();
  const token = readFileSync(serve.joinTokenFile, "utf8").trim();
  for (const [nodeId, zone] of [
    [a1, "a"],
    [a2, "a"],
    [b, "b"],
  ] as const) {
    computes.push(
      startComputeProcess({
        nodeId,
        dataDir: tempDir(`shoal-ncf-${nodeId}-`),
        orchestrators: serve.natsUrl,
        settings: [`Labels=zone=${zone},flows=${tag}`, "Compute.Docker.StopGracePeriod=1s", "Logging.Level=warn"],
        env: { SHOAL_COMPUTE_AUTH_TOKEN: token },
      }),
    );
  }
  await waitFor(
    async () => {
      const nodes = (await client.call("GET", `/api/v1/orchestrator/nodes?labels=flows=${tag}`)).body.Nodes as Body[];
      return nodes.length === 3 && nodes.every((n) => n.Membership === "APPROVED" && n.Health === "HEALTHY");
    },
    30_000,
    () => "three compute nodes approved and healthy",
  );
}, 120_000);

afterAll(async () => {
  for (const c of computes) if (c.child.exitCode === null && c.child.signalCode === null) await c.kill("SIGTERM");
  if (serve.running) await serve.kill("SIGTERM");
  for (const nodeId of [a1, a2, b]) await removeContainersOf(nodeId);
});

describe("shoal node drain --monitor and --wait", () => {
  it("--wait follows a drain under way silently to its end; --monitor prints its actions from its start: exit 0", async () => {
    // The batch job lands on b (the others cordoned), then has somewhere to go once they are not.
    for (const id of [a1, a2]) await nodeAction(id, { Action: "cordon" });
    const job = await submit(["--queue-timeout", "600", image, "--", "sleep", "30"]);
    await runningOn(job, b);
    for (const id of [a1, a2]) await nodeAction(id, { Action: "uncordon" });

    // Started first: --wait and --monitor alone follow the drain there is, its deadline kept.
    expect((await shoal(["node", "drain", b, "--deadline", "5m", "--reason", "kernel upgrade"])).code).toBe(0);
    const deadline = (await node(b)).Drain.Deadline as string;
    const waited = await shoal(["node", "drain", b, "--wait"]);
    expect(waited.code, waited.stderr).toBe(0);
    expect(waited.stdout + waited.stderr).toBe("");
    expect((await node(b)).Drain.Status).toBe("drained");
    // The drain has ended: --monitor shows its story from its start, then its end.
    const res = await shoal(["node", "drain", b, "--monitor"]);
    expect(res.code, `${res.stdout}\n${res.stderr}`).toBe(0);
    expect((await node(b)).Drain.Deadline).toBe(deadline);
    const lines = res.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(new RegExp(`^Following the drain of ${b} started \\d{4}-.* \\(kernel upgrade\\)$`));
    expect(lines[1]).toMatch(/^\d\d:\d\d:\d\d {2}Ctrl-C stops monitoring; the drain goes on$/);
    expect(res.stdout).toMatch(new RegExp(`ExecutionCancelled e-[0-9a-f-]+: node ${b} is draining`));
    expect(res.stdout).toMatch(new RegExp(`NodeDrainCompleted ${b}`));
    expect(lines.at(-1)).toMatch(
      new RegExp(`^\\d\\d:\\d\\d:\\d\\d {2}node ${b} drained: nothing the drain had to move`),
    );
    expect((await node(b)).Drain.Status).toBe("drained");
    // The batch partition went on elsewhere.
    await waitFor(
      async () => (await executions(job)).some((e) => e.NodeID !== b && e.ComputeState.StateType === RUNNING),
      30_000,
      () => "the batch job running on another node",
    );
    expect((await shoal(["job", "stop", job, "--quiet"])).code).toBe(0);
    expect((await shoal(["node", "drain", b, "--disable"])).code).toBe(0);
  }, 120_000);

  it("--monitor counts down to the deadline, what is left on the node each time it changes; past it: exit 3", async () => {
    const ops = await submit(["--target", "all", "--constraints", "zone=b", image, "--", "sleep", "120"]);
    // Right after it runs: the node's last resource report may not count it yet; the orchestrator does.
    await runningOn(ops, b);
    const res = await shoal(["node", "drain", b, "--monitor", "--deadline", "4s"]);
    expect(res.code, `${res.stdout}\n${res.stderr}`).toBe(3);
    const deadline = (await node(b)).Drain.Deadline as string;
    // Off a terminal the status is a line: what is left as the orchestrator counts it, the countdown to the deadline
    // (local time, as tables). The first one already counts the execution.
    const first = res.stdout.split("\n").find((l) => l.includes("; deadline in "));
    expect(first).toMatch(
      new RegExp(
        `^\\d\\d:\\d\\d:\\d\\d {2}1 execution under way on the node, as the orchestrator counts; ` +
          `deadline in [1-4]s \\(${localTime(new Date(deadline))}\\)$`,
      ),
    );
    expect(res.stdout).toMatch(new RegExp(`NodeDrainDeadlineReached ${b}`));
    expect(res.stdout.trimEnd().split("\n").at(-1)).toMatch(
      new RegExp(`node ${b}: the drain's deadline passed with 1 execution left, which were stopped$`),
    );
    expect((await node(b)).Drain).toMatchObject({ Status: "expired", Left: 1 });
    expect((await shoal(["node", "drain", b, "--disable"])).code).toBe(0);
  }, 60_000);

  it("bad combinations are usage errors that change nothing", async () => {
    for (const [args, text] of [
      [["node", "drain", b, "--monitor", "--disable"], "--monitor and --wait follow a drain: not with --disable"],
      [["node", "drain", "-l", "zone=b", "--monitor", "--yes"], "--monitor and --wait follow one node's drain"],
      [["node", "cordon", b, "--monitor"], "--monitor is an option of shoal node drain, not of cordon"],
    ] as const) {
      const res = await shoal([...args]);
      expect(res.code, args.join(" ")).toBe(2);
      expect(res.stderr).toContain(text);
    }
    expect((await node(b)).Drain).toBeUndefined();
  });
});

describe("shoal node <action> -l SELECTOR", () => {
  it("--yes: the matching nodes and the plan, then each node's result; the others untouched", async () => {
    const res = await shoal(["node", "cordon", "-l", `zone=a,flows=${tag}`, "--yes", "--reason", "rack swap"]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain(`2 nodes match zone=a,flows=${tag}:`);
    expect(res.stdout).toMatch(new RegExp(`^${a1} +APPROVED +HEALTHY +false +-$`, "m"));
    expect(res.stdout).toContain('Will cordon all 2, reason "rack swap".');
    expect(res.stdout).toMatch(new RegExp(`^${a1}: ok$`, "m"));
    expect(res.stdout).toMatch(new RegExp(`^${a2}: ok$`, "m"));
    for (const id of [a1, a2]) expect((await node(id)).Cordon).toMatchObject({ Reason: "rack swap" });
    expect((await node(b)).Cordoned).toBe(false);

    const labelled = await shoal(["node", "label", "-l", `zone=a,flows=${tag}`, "team=blue", "--yes"]);
    expect(labelled.code, labelled.stderr).toBe(0);
    expect(labelled.stdout).toContain("Will label all 2 (team=blue).");
    for (const id of [a1, a2]) expect((await node(id)).Info.Labels.team).toBe("blue");
    expect((await node(b)).Info.Labels.team).toBeUndefined();
  });

  it("without --yes and no terminal: refused, nothing changed; an id and -l together: a usage error", async () => {
    const refused = await shoal(["node", "uncordon", "-l", `zone=a,flows=${tag}`]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      `Error: -l zone=a,flows=${tag} matches 2 nodes and there is no terminal to confirm on: add --yes to uncordon them (nothing was changed)`,
    );
    for (const id of [a1, a2]) expect((await node(id)).Cordoned).toBe(true);

    const both = await shoal(["node", "uncordon", a1, "-l", `zone=a,flows=${tag}`, "--yes"]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("shoal node uncordon: give a node id or -l SELECTOR, not both");
    const bad = await shoal(["node", "uncordon", "-l", "zone in (a", "--yes"]);
    expect(bad.code).toBe(2);
    for (const id of [a1, a2]) expect((await node(id)).Cordoned).toBe(true);

    const none = await shoal(["node", "uncordon", "-l", "zone=nowhere", "--yes"]);
    expect(none.code, none.stderr).toBe(0);
    expect(none.stdout).toBe("No node matches zone=nowhere: nothing to uncordon.\n");

    const back = await shoal(["node", "uncordon", "-l", `zone=a,flows=${tag}`, "-y"]);
    expect(back.code, back.stderr).toBe(0);
    for (const id of [a1, a2]) expect((await node(id)).Cordoned).toBe(false);
  });

  it("each node that refuses the action is printed with its error, exit 1; drain -l starts a drain on each match", async () => {
    // Every node is approved already: the API refuses each approve, after the plan.
    const res = await shoal(["node", "approve", "-l", `flows=${tag}`, "--yes"]);
    expect(res.code).toBe(1);
    for (const id of [a1, a2, b])
      expect(res.stdout).toMatch(new RegExp(`^${id}: error: node ${id} already approved`, "m"));
    expect(res.stderr).toBe("Error: approve failed on 3 of 3 nodes.\n");

    const drained = await shoal(["node", "drain", "-l", `zone=b,flows=${tag}`, "--deadline", "10m", "--yes"]);
    expect(drained.code, drained.stderr).toBe(0);
    expect(drained.stdout).toContain("Will drain it (deadline 10m).");
    expect(drained.stdout).toMatch(new RegExp(`^${b}: ok$`, "m"));
    expect(["draining", "drained"]).toContain((await node(b)).Drain.Status);
    expect((await shoal(["node", "drain", "-l", `zone=b,flows=${tag}`, "--disable", "--yes"])).code).toBe(0);
    expect((await node(b)).Drain).toBeUndefined();
  });
});
