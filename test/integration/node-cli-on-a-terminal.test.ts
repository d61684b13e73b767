import { readFileSync } from "node:fs";
import { PassThrough } from "node:stream";
import { connect } from "nats";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ApiClient } from "../../src/cli/api-client.ts";
import { DRAIN_EXIT, drainAndFollow } from "../../src/cli/drain-monitor.ts";
import { actOnSelection, type Terminal } from "../../src/cli/node-selection.ts";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/orchestrator.ts";
import { adminApiKeyPath } from "../../src/security/admin-api-key.ts";
import { computeInfo, orchestratorConfig, silentLogger, tempDir } from "../support/fixtures.ts";
import { joinNode } from "../support/join-node.ts";
import { TestNatsServer } from "../support/nats-server.ts";
import { waitFor } from "../support/shoal-process.ts";

/**
 * What `shoal node` does on a terminal, against a real orchestrator (its own NATS, SQLite) with nodes joined over the
 * real protocol: the question `-l SELECTOR` asks (the answer decides; a "no" changes nothing), and the drain
 * monitor's status line, redrawn in place. The terminal is a stream that says it is one (what the e2e test's
 * processes cannot have).
 */
let nats: TestNatsServer;
let orchestrator: RunningOrchestrator;
let api: ApiClient;
const dataDir = tempDir();

beforeAll(async () => {
  nats = await TestNatsServer.start();
  orchestrator = await startOrchestrator(orchestratorConfig(nats.url, { DataDir: dataDir }), silentLogger);
  const key = readFileSync(adminApiKeyPath(dataDir), "utf8").trim();
  api = new ApiClient(orchestrator.apiUrl, { candidates: [{ kind: "bearer", key, source: "the test" }], notes: [] });
  const nc = await connect({ servers: nats.url });
  try {
    for (const [id, zone] of [
      ["q-1", "a"],
      ["q-2", "a"],
      ["q-3", "b"],
    ] as const)
      expect(await joinNode(nc, id, orchestrator.joinToken.token, computeInfo(id, { zone }))).toMatchObject({
        Accepted: true,
      });
  } finally {
    await nc.drain();
  }
});

afterAll(async () => {
  await orchestrator?.stop();
  await nats?.stop();
});

/** A terminal whose operator types `answer` once asked. */
function terminal(answer: string): { terminal: Terminal; asked: () => string } {
  const input = Object.assign(new PassThrough(), { isTTY: true });
  const output = new PassThrough();
  let asked = "";
  output.on("data", (d: Buffer) => {
    asked += d.toString();
    if (asked.endsWith("[y/N] ")) input.write(`${answer}\n`);
  });
  return { terminal: { input, output }, asked: () => asked };
}

const cordoned = async (id: string) =>
  (await api.request<{ Node: { Cordoned: boolean } }>("GET", `/api/v1/orchestrator/nodes/${id}`)).Node.Cordoned;

describe("node <action> -l SELECTOR on a terminal", () => {
  it("asks before acting: no (or nothing typed) changes nothing, exit 1; yes acts on every match", async () => {
    const printed: string[] = [];
    vi.spyOn(console, "log").mockImplementation((text: string) => void printed.push(text));
    vi.spyOn(console, "error").mockImplementation((text: string) => void printed.push(text));
    try {
      const action = { selectors: ["zone=a"], command: "cordon", body: { Action: "cordon" }, reason: "r", yes: false };
      for (const answer of ["n", ""]) {
        const no = terminal(answer);
        expect(await actOnSelection(api, action, no.terminal)).toBe(1);
        expect(no.asked()).toBe("Cordon 2 nodes? [y/N] ");
        expect(printed.at(-1)).toBe("Nothing was changed.");
        for (const id of ["q-1", "q-2", "q-3"]) expect(await cordoned(id)).toBe(false);
      }
      const yes = terminal("yes");
      expect(await actOnSelection(api, action, yes.terminal)).toBe(0);
      expect(printed.slice(-2)).toEqual(["q-1: ok", "q-2: ok"]);
      expect([await cordoned("q-1"), await cordoned("q-2"), await cordoned("q-3")]).toEqual([true, true, false]);
    } finally {
      vi.restoreAllMocks();
    }
  });
});

describe("node drain --monitor on a terminal", () => {
  it("redraws its status line in place: each line it prints first clears it, the end leaves none behind", async () => {
    // Work on q-3 that has nowhere else to go (q-1 and q-2 are cordoned above) keeps the drain going to its deadline.
    const { JobID } = await api.request<{ JobID: string }>("PUT", "/api/v1/orchestrator/jobs", {
      Job: {
        Type: "batch",
        Constraints: [{ Key: "zone", Operator: "=", Values: ["b"] }],
        Tasks: [{ Name: "main", Engine: { Type: "docker", Params: { Image: "busybox" } } }],
      },
    });
    // Placed on q-3, which never answers the bid: the execution stays there.
    const executions = `/api/v1/orchestrator/jobs/${JobID}/executions`;
    await waitFor(
      async () => (await api.request<{ Items: { NodeID: string }[] }>("GET", executions)).Items[0]?.NodeID === "q-3",
      10_000,
      () => "an execution on q-3",
    );
    let text = "";
    const out = { isTTY: true, write: (t: string) => void (text += t) };
    const code = await drainAndFollow(api, "q-3", { Action: "drain", Deadline: "3s" }, { mode: "monitor", out });
    expect(code).toBe(DRAIN_EXIT.expired);
    const CLEAR = "\r\u001b[K";
    const pieces = text.split(CLEAR);
    // The status line, drawn each second over the last: what is left as the orchestrator counts it (the execution it
    // placed), not as the node reports it (this one reports nothing).
    const status =
      /^\d\d:\d\d:\d\d {2}1 execution under way on the node, as the orchestrator counts; deadline in [0-3]s \(/;
    expect(pieces.filter((piece) => status.test(piece)).length).toBeGreaterThanOrEqual(2);
    // What was printed, as the terminal shows it: each clear wipes the line back to its last newline.
    const shown = pieces.reduce((screen, piece) => screen.slice(0, screen.lastIndexOf("\n") + 1) + piece);
    const lines = shown.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d {2}Ctrl-C stops monitoring; the drain goes on$/);
    expect(lines.at(-1)).toMatch(/^\d\d:\d\d:\d\d {2}node q-3: the drain's deadline passed with 1 execution left/);
    expect(lines.filter((l) => l.includes("deadline in"))).toEqual([]);
    expect(shown.endsWith("\n")).toBe(true);
  });
});
