import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { AckPolicy, connect, credsAuthenticator, type Consumer, type NatsConnection } from "nats";
import { afterAll, describe, expect, it } from "vitest";
import { tempDir } from "../support/fixtures.ts";
import { freePort } from "../support/nats-server.ts";
import { ShoalProcess, runShoal, waitFor } from "../support/shoal-process.ts";
import { storedEvents } from "../support/stored-events.ts";

/**
 * The node-management docs' scenario with real processes: `shoal serve`, three `shoal compute`
 * agents and the CLI; then a killed node, an orchestrator killed with -9 and restarted, and a
 * JetStream subscriber that must see every event once, in store order, across the restart.
 */
describe("docs scenario, end to end", { timeout: 90_000 }, () => {
  const dataDir = tempDir("shoal-e2e-");
  const processes: ShoalProcess[] = [];
  let nc: NatsConnection | undefined;
  let apiPort = 0;
  let natsPort = 0;
  let cliEnv: Record<string, string> = {};

  const serveArgs = () => [
    "serve",
    "-c",
    `DataDir=${dataDir}`,
    "-c",
    "NodeID=node-0",
    "-c",
    "API.Host=127.0.0.1",
    "-c",
    `API.Port=${apiPort}`,
    "-c",
    "Orchestrator.Host=127.0.0.1",
    "-c",
    `Orchestrator.Port=${natsPort}`,
    "-c",
    "Orchestrator.NodeManager.ManualApproval=true",
    "-c",
    "Orchestrator.NodeManager.DisconnectTimeout=3s",
    "-c",
    "Orchestrator.NodeManager.UnknownTimeout=6s",
  ];
  const startServe = () => {
    const p = ShoalProcess.start(serveArgs());
    processes.push(p);
    return p;
  };
  const startCompute = (id: string) => {
    const p = ShoalProcess.start([
      "compute",
      "--node-id",
      id,
      "--labels",
      `index=${id.slice(5)}`,
      "-c",
      `DataDir=${join(dataDir, id)}`,
      "-c",
      `Compute.Orchestrators=nats://127.0.0.1:${natsPort}`,
      "-c",
      `Compute.Auth.Token=${secret("join-token")}`,
      "-c",
      "Compute.Heartbeat.Interval=500ms",
    ]);
    processes.push(p);
    return p;
  };
  const list = async () => {
    const res = await runShoal(["node", "list", "--output", "json"], cliEnv);
    if (res.code !== 0) throw new Error(res.stderr);
    return (JSON.parse(res.stdout) as { Nodes: any[] }).Nodes.map((n) => [
      n.Info.NodeID,
      n.Info.NodeType,
      n.Membership,
      n.Health,
    ]);
  };
  const statusOf = async (id: string) => (await list()).find((r) => r[0] === id)?.[3];
  /** What `serve` generated on first start under DataDir/credentials (join token, reader credentials). */
  const secret = (name: string) => readFileSync(join(dataDir, "credentials", name), "utf8").trim();

  afterAll(async () => {
    await nc?.close();
    for (const p of processes) if (p.child.exitCode === null) await p.kill("SIGTERM");
  });

  let serve: ShoalProcess;
  const computes: Record<string, ShoalProcess> = {};
  let consumer: Consumer;
  const received: { position: number; type: string; stream: string }[] = [];
  const drain = async () => {
    for (;;) {
      const batch = await consumer.fetch({ max_messages: 100, expires: 1000 });
      let n = 0;
      for await (const m of batch) {
        received.push(m.json());
        m.ack();
        n++;
      }
      if (n === 0) return;
    }
  };

  it("starts an orchestrator and three compute nodes that register PENDING", async () => {
    apiPort = await freePort();
    natsPort = await freePort();
    // SHOAL_DATADIR: the CLI on the orchestrator's machine finds the generated admin key there.
    cliEnv = { SHOAL_API_HOST: "127.0.0.1", SHOAL_API_PORT: String(apiPort), SHOAL_DATADIR: dataDir };
    serve = startServe();
    await serve.waitForOutput("orchestrator node-0 is running");
    const keyFile = join(dataDir, "credentials", "api-admin-key");
    await serve.waitForOutput(`Admin API key created in ${keyFile}`);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(serve.stdout + serve.stderr).not.toContain(readFileSync(keyFile, "utf8").trim());

    nc = await connect({
      servers: `nats://127.0.0.1:${natsPort}`,
      authenticator: credsAuthenticator(readFileSync(join(dataDir, "credentials", "nats-events-reader.creds"))),
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
    });
    const jsm = await nc.jetstreamManager();
    await jsm.consumers.add("SHOAL_EVENTS", { durable_name: "e2e-auditor", ack_policy: AckPolicy.Explicit });
    consumer = await nc.jetstream().consumers.get("SHOAL_EVENTS", "e2e-auditor");

    for (const id of ["node-1", "node-2", "node-3"]) computes[id] = startCompute(id);
    await waitFor(
      async () => (await list()).length === 4,
      30_000,
      () => "4 nodes listed",
    );
    expect(await list()).toEqual([
      ["node-0", "Requester", "APPROVED", "HEALTHY"],
      ["node-1", "Compute", "PENDING", "HEALTHY"],
      ["node-2", "Compute", "PENDING", "HEALTHY"],
      ["node-3", "Compute", "PENDING", "HEALTHY"],
    ]);
  });

  it("approves node-1, rejects node-3 with a message and deletes node-2: the docs' final table", async () => {
    expect(await runShoal(["node", "reject", "node-3", "-m", "malicious node?"], cliEnv)).toMatchObject({
      code: 0,
      stdout: "Ok\n",
    });
    expect(await runShoal(["node", "approve", "node-1"], cliEnv)).toMatchObject({ code: 0, stdout: "Ok\n" });
    expect(await runShoal(["node", "delete", "node-2"], cliEnv)).toMatchObject({ code: 0, stdout: "Ok\n" });
    const again = await runShoal(["node", "approve", "node-1"], cliEnv);
    expect(again).toMatchObject({ code: 1, stderr: "Failed to approve node node-1: node node-1 already approved\n" });

    // The docs' final table. node-3's STATUS is not compared: in Shoal a reject revokes the
    // node's key, so it falls silent and decays (the next test waits for that).
    const table = await runShoal(["node", "list"], cliEnv);
    const lines = table.stdout
      .trim()
      .split("\n")
      .map((l) => l.split(/\s+/).slice(0, 4).join(" "));
    expect(lines.slice(0, 3)).toEqual([
      "ID TYPE APPROVAL STATUS",
      "node-0 Requester APPROVED HEALTHY",
      "node-1 Compute APPROVED HEALTHY",
    ]);
    expect(lines[3]).toMatch(/^node-3 Compute REJECTED \S+$/);
    expect(lines).toHaveLength(4);
  });

  it("marks a killed node UNHEALTHY, then UNKNOWN; the rejected node is cut off; the deleted node does not come back by itself", async () => {
    await computes["node-1"]!.kill("SIGKILL");
    await waitFor(
      async () => (await statusOf("node-1")) === "UNHEALTHY",
      15_000,
      () => "node-1 UNHEALTHY",
    );
    await waitFor(
      async () => (await statusOf("node-1")) === "UNKNOWN",
      15_000,
      () => "node-1 UNKNOWN",
    );
    await waitFor(
      async () => (await statusOf("node-3")) === "UNKNOWN",
      15_000,
      () => "node-3 UNKNOWN",
    );
    expect((await list()).map((r) => r[0])).not.toContain("node-2");
    // Cut off either way: its live connection refused, or (if it was still logging in when the
    // reject came) its next join refused.
    expect(computes["node-3"]!.stderr).toMatch(
      /NATS refuses this node's key|join refused; will retry .*reason=node has been rejected/,
    );
    await drain();
  });

  it("keeps every state and the full history across kill -9 of the orchestrator", async () => {
    const before = await list();
    const history = (await runShoal(["node", "history", "node-2", "--output", "json"], cliEnv)).stdout;
    // The CLI used the generated admin key; the history names that identity.
    expect(JSON.parse(history).Items.at(-1)).toMatchObject({
      type: "NodeDeleted",
      metadata: { actor: { type: "operator", id: "admin" } },
    });
    await serve.kill("SIGKILL");
    serve = startServe();
    await serve.waitForOutput("orchestrator node-0 is running");
    await serve.waitForOutput(`Admin API key in ${join(dataDir, "credentials", "api-admin-key")}`);
    expect(await list()).toEqual(before);
    expect((await runShoal(["node", "history", "node-2", "--output", "json"], cliEnv)).stdout).toBe(history);
    const describe3 = JSON.parse((await runShoal(["node", "describe", "node-3", "--output", "json"], cliEnv)).stdout);
    expect(describe3).toMatchObject({ Membership: "REJECTED", Info: { Labels: { index: "3" } } });
  });

  it("re-registers a deleted node as a new lifecycle when its agent restarts", async () => {
    await computes["node-2"]!.kill("SIGTERM");
    computes["node-2"] = startCompute("node-2");
    await waitFor(
      async () => (await list()).some((r) => r[0] === "node-2"),
      30_000,
      () => "node-2 back",
    );
    expect((await list()).find((r) => r[0] === "node-2")).toEqual(["node-2", "Compute", "PENDING", "HEALTHY"]);
    const history = JSON.parse((await runShoal(["node", "history", "node-2", "--output", "json"], cliEnv)).stdout);
    expect(history.Items.map((e: any) => [e.type, e.data.Lifecycle ?? e.data.Reason])).toEqual([
      ["NodeRegistered", 1],
      ["NodeCredentialBound", undefined],
      ["NodeCredentialRevoked", "deleted"],
      ["NodeDeleted", undefined],
      ["NodeRegistered", 2],
      ["NodeCredentialBound", undefined],
    ]);
  });

  it("delivered every node event to the subscriber once, in store order, with no gap across the restart", async () => {
    await serve.kill("SIGTERM");
    serve = startServe();
    await serve.waitForOutput("orchestrator node-0 is running");
    // Read once it runs: the clean stop wrote its own node stopped, the start wrote it HEALTHY again.
    const stored = (await storedEvents(dataDir)).filter((e) => e.stream.startsWith("node-"));
    const own = stored.filter((e) => e.stream === "node-node-0").map((e) => e.type);
    expect(own.slice(-2)).toEqual(["NodeBecameUnhealthy", "NodeBecameHealthy"]);
    await waitFor(
      async () => {
        await drain();
        return received.length >= stored.length;
      },
      20_000,
      () => `${stored.length} events, got ${received.length}`,
    );
    expect(received.map((e) => e.position)).toEqual(stored.map((e) => e.position));
    expect(stored.map((e) => e.type)).toEqual(
      expect.arrayContaining([
        "NodeApproved",
        "NodeRejected",
        "NodeDeleted",
        "NodeBecameUnhealthy",
        "NodeBecameUnknown",
      ]),
    );
  });

  it("runs the README's container job: submitted as the tour does, Completed on an approved node with its output", async () => {
    // The tour's job spec, as the README has it (the heredoc that writes hello.json).
    const readme = readFileSync(join(import.meta.dirname, "../../README.md"), "utf8");
    const spec = /cat > hello\.json <<'EOF'\n([\s\S]*?)\nEOF\n/.exec(readme)?.[1];
    expect(spec, "the README's tour has a job step").toBeDefined();
    expect(await runShoal(["node", "approve", "node-2"], cliEnv)).toMatchObject({ code: 0, stdout: "Ok\n" });
    const api = `http://127.0.0.1:${apiPort}/api/v1/orchestrator/jobs`;
    const put = await fetch(api, {
      method: "PUT",
      headers: { authorization: `Bearer ${secret("api-admin-key")}`, "content-type": "application/json" },
      body: spec!,
    });
    const submitted = (await put.json()) as { JobID: string };
    expect(put.status, JSON.stringify(submitted)).toBe(200);
    // Read as the tour reads it: no credentials (reads are open to anonymous callers by default).
    let got: any = {};
    await waitFor(
      async () => {
        got = await (await fetch(`${api}/${submitted.JobID}?include=executions,history`)).json();
        return ["Completed", "Failed"].includes(got.Job?.State?.StateType);
      },
      60_000,
      () => `the tour's job done, last ${JSON.stringify(got.Job?.State)}`,
    );
    expect(got.Job.State.StateType, JSON.stringify(got.Job.State)).toBe("Completed");
    expect(got.Executions.Items.map((e: any) => [e.NodeID, e.RunOutput?.Stdout, e.RunOutput?.ExitCode])).toEqual([
      ["node-2", "hello from Shoal\n", 0],
    ]);
  });
});
