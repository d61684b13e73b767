import { connect } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import type { AuthUser } from "../../src/config/auth-users.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { csvRows } from "../support/csv-rows.ts";
import { orchestratorConfig, silentLogger } from "../support/fixtures.ts";
import { joinNode } from "../support/join-node.ts";
import { TestNatsServer } from "../support/nats-server.ts";
import { runShoal, ShoalProcess, waitFor } from "../support/shoal-process.ts";

/**
 * `shoal events` as a user runs it (the compiled CLI, a bin/shoal process a call) against a real orchestrator where
 * alice acted on nodes through the API; the CLI prints what the API answers.
 */
const TOKEN = "s3cret";
const USERS: AuthUser[] = [
  { Username: "alice", Password: "alice's password", Capabilities: [{ Actions: ["read:node", "write:node"] }] },
  { Alias: "auditor", Username: "audit", Password: "audit password", Capabilities: [{ Actions: ["read:history"] }] },
  {
    Username: "watcher",
    Password: "watcher's password",
    Capabilities: [{ Actions: ["read:node", "read:job", "read:history", "write:job"] }],
  },
];
const AUDITOR = `Basic ${Buffer.from("audit:audit password").toString("base64")}`;
/** Control characters and a newline in a reason: the table must show them escaped, on one line. */
const REASON = "ok\u001b[31m red\u009b0m\r\nnext";
// The characters a terminal would act on, raw: what none of the output may hold.
// eslint-disable-next-line no-control-regex
const RAW = /[\u001b\u009b\r]/;

let nats: TestNatsServer;
let orchestrator: RunningOrchestrator;
let api: string[];
/** Tables show times in the local zone: India's, as it has no daylight saving, so that the test can say the hour. */
const TZ = "Asia/Kolkata";
const inKolkata = (rfc3339: string) =>
  new Date(Date.parse(rfc3339) + 330 * 60_000).toISOString().slice(0, 19).replace("T", " ");
const LOCAL_TIME = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/;
const events = (...args: string[]) => runShoal(["events", ...api, ...args], { TZ });

async function feed(query: string): Promise<{ Items: Record<string, any>[]; NextToken: string }> {
  const res = await fetch(`${orchestrator.apiUrl}/api/v1/orchestrator/events?${query}`, {
    headers: { authorization: AUDITOR },
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { Items: Record<string, any>[]; NextToken: string };
}

beforeAll(async () => {
  nats = await TestNatsServer.start();
  orchestrator = await startOrchestrator(
    orchestratorConfig(nats.url, {
      "Orchestrator.Auth.Token": TOKEN,
      "Orchestrator.NodeManager.ManualApproval": true,
      "API.Auth.Users": USERS,
    }),
    silentLogger,
  );
  const nc = await connect({ servers: nats.url });
  try {
    for (const id of ["n-1", "n-2"]) expect(await joinNode(nc, id, TOKEN)).toMatchObject({ Accepted: true });
  } finally {
    await nc.drain();
  }
  const alice = `Basic ${Buffer.from("alice:alice's password").toString("base64")}`;
  for (const [id, body] of [
    ["n-1", { Action: "approve", Message: "racked" }],
    ["n-2", { Action: "approve" }],
    ["n-1", { Action: "cordon", Message: REASON }],
  ] as const) {
    const res = await fetch(`${orchestrator.apiUrl}/api/v1/orchestrator/nodes/${id}`, {
      method: "PUT",
      headers: { "content-type": "application/json", authorization: alice },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
  }
  api = ["--api-port", new URL(orchestrator.apiUrl).port, "--username", "audit", "--password", "audit password"];
});

afterAll(async () => {
  await orchestrator?.stop();
  await nats?.stop();
});

describe("shoal events", () => {
  it("prints TIME ENTITY EVENT BY REASON, one line an event, text from the API escaped", async () => {
    const res = await events("--actor", "operator:alice");
    expect(res.code, res.stderr).toBe(0);
    const lines = res.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^TIME +ENTITY +EVENT +BY +REASON$/);
    const { Items } = await feed("actor=operator:alice");
    expect(Items.map((e) => e.type)).toEqual(["NodeApproved", "NodeApproved", "NodeCordoned"]);
    // The header, then one line each: the newline in the reason did not break the table.
    expect(lines).toHaveLength(1 + Items.length);
    expect(lines[1]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d +node\/n-1 +NodeApproved +operator:alice +racked$/);
    expect(lines[1]?.startsWith(`${inKolkata(Items[0]!.time)}  `)).toBe(true);
    expect(lines[3]).toContain("node/n-1  NodeCordoned  operator:alice  ok\\u001b[31m red\\u009b0m; next");
    expect(res.stdout).not.toMatch(RAW);
  });

  it("pages with --limit and --next-token, and says how to go on", async () => {
    const first = await events("--actor", "operator:alice", "--limit", "2");
    expect(first.code, first.stderr).toBe(0);
    const token = /--next-token (\d+)/.exec(first.stdout)?.[1];
    expect(token, first.stdout).toBeDefined();
    expect(first.stdout.split("\n").filter((l) => l.includes("operator:alice"))).toHaveLength(2);
    const rest = await events("--actor", "operator:alice", "--limit", "2", "--next-token", token!);
    expect(rest.code, rest.stderr).toBe(0);
    expect(rest.stdout).toContain("NodeCordoned");
    expect(rest.stdout).not.toContain("--next-token");
  });

  it("prints the API's page as JSON and YAML, and every event of the selection as NDJSON", async () => {
    const query = ["--category", "node", "--entity", "n-1,n-2"];
    const page = await feed("category=node&entity=n-1,n-2");
    const json = await events(...query, "--output", "json");
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(page);
    const yaml = await events(...query, "--output", "yaml");
    expect(yaml.code, yaml.stderr).toBe(0);
    expect(parseYaml(yaml.stdout)).toEqual(page);
    expect(yaml.stdout).not.toMatch(RAW);
    const ndjson = await events(...query, "--output", "ndjson");
    expect(ndjson.code, ndjson.stderr).toBe(0);
    expect(ndjson.stdout).not.toMatch(RAW);
    expect(
      ndjson.stdout
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l)),
    ).toEqual(page.Items);
  });

  it("refuses bad arguments with usage (exit 2), the API's refusal of a bad filter too", async () => {
    for (const args of [
      ["--output", "xml"],
      ["--output", "ndjson", "--limit", "3"],
      ["--limit", "0"],
      ["--after", "soon"],
      ["n-1"],
      ["--bogus"],
    ]) {
      const res = await events(...args);
      expect(res.code, args.join(" ")).toBe(2);
      expect(res.stderr, args.join(" ")).toMatch(/^Error: .*\nRun 'shoal events --help' for usage\./);
    }
    // The API's refusals of what the flags asked are bad arguments too.
    const bad = await events("--actor", "admin:alice");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('Error: --actor: "admin:alice" is not type[:id]');
    expect(bad.stderr).toContain("Run 'shoal events --help' for usage.");
    const badNdjson = await events("--since", "yesterday", "--output", "ndjson");
    expect(badNdjson.code).toBe(2);
    expect(badNdjson.stderr).toContain('Error: --since: "yesterday"');
    const help = await runShoal(["events", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Usage: shoal events [options]");
  });

  it("names the flag (or argument) a refused query parameter came from (exit 2), in every command", async () => {
    const watcher = ["--api-port", new URL(orchestrator.apiUrl).port, "--username", "watcher"];
    const shoal = (...args: string[]) => runShoal([...args, ...watcher, "--password", "watcher's password"]);
    const future = "2999-01-01T00:00:00Z";
    const entities = Array.from({ length: 11 }, (_, i) => `--entity=e${i}`);
    for (const [args, said] of [
      [["events", "--until", "soon"], '--until: "soon" is not an RFC 3339 time'],
      [["events", "--after", "999999"], "--after: position 999999 is beyond the newest event"],
      [["events", "--type", "NodeExploded"], '--type: unknown event type "NodeExploded"'],
      [["events", "--category", "cluster"], '--category: unknown category "cluster"'],
      [["events", ...entities], "--entity: at most 10 values, got 11"],
      [["events", "--next-token", "soon"], "--next-token: next_token must be a position"],
      [["events", "--follow", "--after", "999999"], "--after: position 999999 is beyond the newest event"],
      [["node", "list", "--as-of", future], `--as-of: ${future} is later than now`],
      [["node", "list", "--at-position", "999999"], "--at-position: position 999999 is beyond the newest event"],
      [["job", "list", "--as-of", "noon"], '--as-of: "noon" is not an RFC 3339 time'],
      [["audit", "diff", "1", "999999"], "TO: position 999999 is beyond the newest event"],
      [["audit", "membership", "--since", "dawn"], '--since: "dawn" is not an RFC 3339 time'],
      [["audit", "membership", "--until", future], `--until: ${future} is later than now`],
      [["node", "list", "--filter-approval", "approvd"], "--filter-approval: "],
      [["node", "list", "--filter-status", "sleepy"], "--filter-status: "],
      [["node", "list", "--labels", "zone in (a"], "--labels: "],
      [["job", "list", "--labels", "=x"], "--labels: "],
    ] as const) {
      const res = await shoal(...args);
      expect(res.code, `${args.join(" ")}: ${res.stderr}`).toBe(2);
      expect(res.stderr, args.join(" ")).toContain(`Error: ${said}`);
      expect(res.stderr, args.join(" ")).toContain(
        `\nRun 'shoal ${args[0]}${args[0] === "events" ? "" : ` ${args[1]}`} --help'`,
      );
      expect(res.stderr, args.join(" ")).not.toContain("query parameter");
    }
  });
});

describe("the read commands' output: -o table|wide|json|yaml|csv, --hide-header, --no-style, --show", () => {
  const watcher = () => ["--api-port", new URL(orchestrator.apiUrl).port, "--username", "watcher"];
  const shoal = (...args: string[]) => runShoal([...args, ...watcher(), "--password", "watcher's password"], { TZ });
  const WATCHER = `Basic ${Buffer.from("watcher:watcher's password").toString("base64")}`;
  const get = async <T>(path: string): Promise<T> => {
    const res = await fetch(`${orchestrator.apiUrl}${path}`, { headers: { authorization: WATCHER } });
    expect(res.status).toBe(200);
    return (await res.json()) as T;
  };
  const ok = (res: { code: number | null; stdout: string; stderr: string }) => {
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).not.toMatch(RAW);
    return res.stdout;
  };
  const tableRows = (out: string) =>
    out
      .trimEnd()
      .split("\n")
      .map((l) => l.split(/ {2,}/));
  const DEFAULT_HEADER = ["ID", "TYPE", "APPROVAL", "STATUS", "SCHEDULING", "LABELS", "CPU", "MEMORY", "DISK", "GPU"];

  it("node list: the same nodes in every format; wide and csv with whole values and RFC 3339 times", async () => {
    const { Nodes } = await get<{ Nodes: { Info: { NodeID: string } }[] }>("/api/v1/orchestrator/nodes");
    const ids = Nodes.map((n) => n.Info.NodeID);
    expect(ids).toEqual(expect.arrayContaining(["n-1", "n-2"]));
    const json = JSON.parse(ok(await shoal("node", "list", "-o", "json"))) as { Nodes: typeof Nodes };
    expect(json.Nodes.map((n) => n.Info.NodeID)).toEqual(ids);
    const yaml = parseYaml(ok(await shoal("node", "list", "--output", "yaml"))) as { Nodes: typeof Nodes };
    expect(yaml.Nodes.map((n) => n.Info.NodeID)).toEqual(ids);

    const table = tableRows(ok(await shoal("node", "list")));
    // The drain column is empty on every node here, so a plain row ends before it.
    expect(table[0]).toEqual([...DEFAULT_HEADER, "DRAIN"]);
    expect(table.slice(1).map((r) => r[0])).toEqual(ids);
    expect(ok(await shoal("node", "list", "--no-style"))).toBe(ok(await shoal("node", "list")));
    expect(tableRows(ok(await shoal("node", "list", "--hide-header")))).toEqual(table.slice(1));

    const csv = csvRows(ok(await shoal("node", "list", "-o", "csv")));
    expect(csv[0]).toEqual([...DEFAULT_HEADER, "DRAIN"]);
    expect(csv.slice(1).map((r) => r[0])).toEqual(ids);
    expect(csv.find((r) => r[0] === "n-1")?.slice(1, 5)).toEqual(["Compute", "APPROVED", "HEALTHY", "cordoned"]);
    expect(csvRows(ok(await shoal("node", "list", "-o", "csv", "--hide-header")))).toEqual(csv.slice(1));

    for (const wide of [["-o", "wide"], ["--wide"]]) {
      const rows = tableRows(ok(await shoal("node", "list", ...wide)));
      expect(rows[0]).toEqual(expect.arrayContaining(["HOSTNAME", "VERSION", "ENGINES", "OUTPUTS", "LAST HEARTBEAT"]));
    }
    const wideCsv = csvRows(ok(await shoal("node", "list", "-o", "csv", "--wide")));
    const heartbeat = wideCsv[0]!.indexOf("LAST HEARTBEAT");
    expect(wideCsv.find((r) => r[0] === "n-1")?.[heartbeat]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it("node list --show: Bacalhau's column groups; an unknown one is a usage error naming them", async () => {
    const rows = tableRows(ok(await shoal("node", "list", "--show", "version,features")));
    const groups = ["VERSION", "ARCHITECTURE", "OS", "ENGINES", "INPUTS FROM", "OUTPUTS"];
    expect(rows[0]).toEqual([...DEFAULT_HEADER.slice(0, 5), ...groups, "DRAIN"]);
    const bad = await shoal("node", "list", "--show", "labels,gpus");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--show takes column groups among labels, version, features, capacity, got "gpus"');
    for (const args of [
      ["node", "list", "-o", "json", "--hide-header"],
      ["node", "history", "n-1", "-o", "yaml", "--wide"],
      ["node", "approve", "n-1", "--wide"],
      ["job", "describe", "j-1", "-o", "csv"],
    ]) {
      const res = await shoal(...args);
      expect(res.code, args.join(" ")).toBe(2);
      expect(res.stderr, args.join(" ")).toMatch(/^Error: /);
    }
  });

  it("node history and events: local times in tables (TZ), RFC 3339 UTC in csv, the API's instants", async () => {
    const { Items } = await get<{ Items: { time: string; position: number; id: string }[] }>(
      "/api/v1/orchestrator/nodes/n-1/history",
    );
    const table = tableRows(ok(await shoal("node", "history", "n-1")));
    expect(table[0]).toEqual(["REV", "TIME", "EVENT", "BY", "REASON"]);
    expect(table.slice(1).map((r) => r[1])).toEqual(Items.map((e) => inKolkata(e.time)));
    expect(table[1]?.[1]).toMatch(LOCAL_TIME);
    const csv = csvRows(ok(await shoal("node", "history", "n-1", "-o", "csv", "--wide")));
    expect(csv[0]).toEqual(["POSITION", "REV", "TIME", "EVENT", "BY", "REASON", "EVENT ID"]);
    expect(csv.slice(1).map((r) => [Number(r[0]), r[2], r[6]])).toEqual(Items.map((e) => [e.position, e.time, e.id]));

    const page = await feed("actor=operator:alice");
    const rows = csvRows(ok(await events("--actor", "operator:alice", "-o", "csv")));
    expect(rows[0]).toEqual(["TIME", "ENTITY", "EVENT", "BY", "REASON"]);
    expect(rows.slice(1).map((r) => r[0])).toEqual(page.Items.map((e) => e.time));
    // The reason's line break is inside one quoted field; its other control characters are shown escaped.
    expect(rows.at(-1)).toEqual([
      page.Items.at(-1)!.time,
      "node/n-1",
      "NodeCordoned",
      "operator:alice",
      "ok\\u001b[31m red\\u009b0m\\u000d\nnext",
    ]);
    const membership = csvRows(ok(await shoal("audit", "membership", "-o", "csv", "--node", "n-1")));
    expect(membership[0]).toEqual(["NODE", "JOINED", "MEMBERSHIP", "BY", "REASON", "HEALTHY", "UNHEALTHY", "UNKNOWN"]);
    expect(membership[1]?.slice(0, 3)).toEqual(["n-1", expect.stringMatching(/Z$/), "APPROVED"]);
  });
});

describe("following and watching", () => {
  const port = () => new URL(orchestrator.apiUrl).port;
  const as = (user: string, password: string) => ["--api-port", port(), "--username", user, "--password", password];
  const alice = `Basic ${Buffer.from("alice:alice's password").toString("base64")}`;
  const watcher = `Basic ${Buffer.from("watcher:watcher's password").toString("base64")}`;
  const started: ShoalProcess[] = [];
  afterAll(async () => {
    for (const p of started) await p.kill("SIGKILL");
  });
  const start = (args: string[]) => {
    const p = ShoalProcess.start(args);
    started.push(p);
    return p;
  };
  const put = async (path: string, body: unknown, authorization: string) => {
    const res = await fetch(`${orchestrator.apiUrl}${path}`, {
      method: "PUT",
      headers: { "content-type": "application/json", authorization },
      body: JSON.stringify(body),
    });
    expect(res.status, await res.text()).toBe(200);
  };
  const interrupted = async (p: ShoalProcess) => {
    p.child.kill("SIGINT");
    expect(await p.exited, p.stderr).toBe(0);
  };

  it("shoal events -f prints the stored events after --after, then each new one as a table line, escaped", async () => {
    const follow = start(["events", "-f", "--after", "0", "--category", "node", ...api]);
    await follow.waitForOutput("NodeCordoned");
    expect(follow.stdout.split("\n")[0]).toMatch(/^TIME +ENTITY +EVENT +BY +REASON$/);
    expect(follow.stdout).toContain("ok\\u001b[31m red");
    expect(follow.stdout).not.toMatch(RAW);
    await put("/api/v1/orchestrator/nodes/n-2", { Action: "label", Labels: { followed: "yes" } }, alice);
    await follow.waitForOutput("NodeLabelsSet");
    const lines = follow.stdout.trimEnd().split("\n");
    expect(lines.at(-1)).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d +node\/n-2 +NodeLabelsSet +operator:alice/);
    const { Items } = await feed("category=node");
    expect(lines).toHaveLength(1 + Items.length);
    await interrupted(follow);
  });

  it("shoal node list -w prints the list again when a node event is stored, until Ctrl-C", async () => {
    const watch = start(["node", "list", "-w", ...as("watcher", "watcher's password")]);
    await watch.waitForOutput("n-2");
    expect(watch.stdout).toMatch(/n-2 +Compute +APPROVED .* eligible/);
    await put("/api/v1/orchestrator/nodes/n-2", { Action: "cordon", Message: "watched" }, alice);
    await waitFor(
      () => /n-2 +Compute +APPROVED .* cordoned/.test(watch.stdout),
      30_000,
      () => watch.stdout,
    );
    // Not a terminal: pages follow each other, a blank line between them.
    expect(watch.stdout.split("\n\n").length).toBeGreaterThanOrEqual(2);
    expect(watch.stdout.split("\n\n").at(-1)).toMatch(/^ID +TYPE +APPROVAL/);
    await interrupted(watch);
  });

  it("shoal job list -w prints the list again when a job is submitted", async () => {
    const watch = start(["job", "list", "-w", ...as("watcher", "watcher's password")]);
    await watch.waitForOutput("CREATED");
    expect(watch.stdout).not.toContain("watched-job");
    const job = {
      Name: "watched-job",
      Type: "batch",
      Constraints: [{ Key: "zone", Operator: "=", Values: ["nowhere"] }],
      Tasks: [
        { Name: "main", Engine: { Type: "docker", Params: { Image: "shoal-test/busybox:1", Parameters: ["true"] } } },
      ],
    };
    await put("/api/v1/orchestrator/jobs", { Job: job }, watcher);
    await watch.waitForOutput("watched-job");
    await interrupted(watch);
  });

  it("--watch without read:history says that it needs it", async () => {
    const res = await runShoal(["node", "list", "-w", ...as("alice", "alice's password")]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/--watch follows the cluster's event stream, which needs the read:history capability/);
  });
});
