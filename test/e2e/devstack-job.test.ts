import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { apiCaPath } from "../../src/security/tls/api-ca-path.ts";
import { tempDir } from "../support/fixtures.ts";
import { getJsonOverHttps } from "../support/https-json.ts";
import { localOrchestratorFlags } from "../support/local-orchestrator-flags.ts";
import { freePort } from "../support/nats-server.ts";
import { ShoalProcess, waitFor } from "../support/shoal-process.ts";

/**
 * `shoal devstack` gets a machine ready for the README's container job: it says whether a Docker
 * engine answers and the tour image is there (and how to fix it when not), and the README's job
 * step, run as written with curl, completes on a devstack compute node.
 */
const processes: ShoalProcess[] = [];
afterAll(async () => {
  for (const p of processes) if (p.child.exitCode === null && p.child.signalCode === null) await p.kill("SIGTERM");
});

async function devstack(dataDir: string, env: Record<string, string> = {}) {
  const apiPort = await freePort();
  const p = ShoalProcess.start(
    ["devstack", "--compute", "1", ...localOrchestratorFlags({ dataDir, apiPort, natsPort: await freePort() })],
    env,
  );
  processes.push(p);
  await p.waitForOutput("Press Ctrl-C to stop.", 90_000);
  return { p, apiPort };
}

/** The README's job step: the sh block that writes hello.json and submits it, up to the JOB= line. */
function readmeJobStep(): string {
  const readme = readFileSync(join(import.meta.dirname, "../../README.md"), "utf8");
  const block = /```sh\n(cat > hello\.json[\s\S]*?)```/.exec(readme)?.[1];
  if (block === undefined)
    throw new Error("the README's tour has no job step (a sh block starting `cat > hello.json`)");
  const lines = block.split("\n");
  const submitted = lines.findIndex((l) => l.includes("-d @hello.json"));
  return lines.slice(0, submitted + 1).join("\n");
}

describe("shoal devstack and the README's container job", { timeout: 150_000 }, () => {
  it("says the engine answers and the tour image is there; the README's curl job completes with its output", async () => {
    const dataDir = tempDir("shoal-e2e-devstack-");
    // As the README runs it: HTTPS, and NATS over TLS, with the generated CA (the compute node finds it).
    const { p, apiPort } = await devstack(dataDir, {
      SHOAL_API_TLS_DISABLE: "false",
      SHOAL_ORCHESTRATOR_NATS_TLS_DISABLE: "false",
    });
    expect(p.stdout).toContain("the tour image shoal-test/busybox:1 is there");
    expect(p.stdout).toContain("/api/v1/orchestrator/jobs -d ");
    // The nats CLI line trusts the generated CA, as NATS speaks TLS.
    expect(p.stdout).toMatch(
      new RegExp(
        `nats sub 'shoal\\.events\\.>' -s nats://\\S+ --creds \\S+ --tlsca ${join(dataDir, "devstack")}/\\S+ `,
      ),
    );
    const caFile = apiCaPath(join(dataDir, "devstack"));
    const ca = readFileSync(caFile, "utf8");
    const api = `https://localhost:${apiPort}/api/v1/orchestrator`;
    await waitFor(
      async () => ((await getJsonOverHttps(`${api}/nodes/node-1`, ca)) as any).Node?.Membership === "APPROVED",
      30_000,
      () => "node-1 approved",
    );

    const key = readFileSync(join(dataDir, "devstack", "credentials", "api-admin-key"), "utf8").trim();
    const script = `${readmeJobStep().replaceAll("localhost:1234", `localhost:${apiPort}`)}\necho "$JOB"`;
    const { stdout } = await promisify(execFile)("bash", ["-euo", "pipefail", "-c", script], {
      cwd: tempDir("shoal-e2e-tour-"),
      env: { ...process.env, KEY: key, CA: caFile },
    });
    const jobId = stdout.trim();
    expect(jobId).toMatch(/^j-[0-9a-f-]{36}$/);

    let got: any = {};
    await waitFor(
      async () => {
        got = await getJsonOverHttps(`${api}/jobs/${jobId}?include=executions,history`, ca);
        return ["Completed", "Failed"].includes(got.Job?.State?.StateType);
      },
      60_000,
      () => `the tour's job done, last ${JSON.stringify(got.Job?.State)}`,
    );
    expect(got.Job.State.StateType, JSON.stringify(got.Job.State)).toBe("Completed");
    expect(got.Executions.Items.map((e: any) => [e.NodeID, e.RunOutput?.Stdout, e.RunOutput?.ExitCode])).toEqual([
      ["node-1", "hello from Shoal\n", 0],
    ]);
  });

  it("without a Docker engine: says so and how to start one, and still runs the node tour", async () => {
    const { p, apiPort } = await devstack(tempDir("shoal-e2e-devstack-"), {
      DOCKER_HOST: "unix:///nonexistent/docker.sock",
    });
    expect(p.stdout).toContain("No Docker engine answers at DOCKER_HOST=unix:///nonexistent/docker.sock");
    expect(p.stdout).toMatch(/Start one: bash \S+\/scripts\/start-dockerd/);
    expect(p.stdout).not.toContain("/api/v1/orchestrator/jobs -d ");
    expect(p.stdout).toMatch(/nats sub 'shoal\.events\.>' -s nats:\/\/\S+ --creds \S+ +# cluster events/);
    const nodes = (await (await fetch(`http://127.0.0.1:${apiPort}/api/v1/orchestrator/nodes`)).json()) as {
      Nodes: { Info: { NodeID: string } }[];
    };
    expect(nodes.Nodes.map((n) => n.Info.NodeID)).toContain("node-0");
  });
});
