import { afterAll, beforeAll, expect, it } from "vitest";
import type { RecordedEvent } from "../../src/events/store/event-store.ts";
import { tempDir } from "../support/fixtures.ts";
import { JobApiClient } from "../support/job-api-client.ts";
import { LocalServe } from "../support/local-serve.ts";
import { shellJob } from "../support/shell-job.ts";
import { ShoalProcess, waitFor } from "../support/shoal-process.ts";
import { dataIds, openSse, type SseClient } from "../support/sse-client.ts";

/**
 * The event stream across an orchestrator killed with SIGKILL while jobs are submitted: real `shoal serve` processes
 * on one DataDir, an HTTP client that reconnects with the last id it received, and `shoal events --follow`. Each ends
 * up with every event the feed holds, once, in store order.
 */
// No node ever joins: each job waits in the queue, its events stored and nothing else.
const serve = new LocalServe(tempDir("shoal-sse-e2e-"), ["JobDefaults.Batch.Task.Timeouts.QueueTimeout=1h"]);
let follower: ShoalProcess | undefined;
const clients: SseClient[] = [];

const { url, adminKey } = serve;
const api = new JobApiClient(url, adminKey);
const auth = () => ({ authorization: `Bearer ${adminKey()}` });

/** Submits jobs one after another until `stop()`; submissions the killed orchestrator refuses are not counted. */
function submitting(): { stop: () => Promise<number> } {
  let stopped = false;
  let accepted = 0;
  const loop = (async () => {
    while (!stopped) {
      const res = await api
        .call("PUT", "/api/v1/orchestrator/jobs", { Job: shellJob("busybox", "true") })
        .catch(() => undefined);
      if (res?.status === 200) accepted++;
      else await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
      return accepted;
    },
  };
}

/** Every event of the feed (its default categories), through its pages. */
async function feedIds(): Promise<number[]> {
  const out: number[] = [];
  let token = "";
  do {
    const res = await api.call("GET", `/api/v1/orchestrator/events?limit=1000${token ? `&next_token=${token}` : ""}`);
    expect(res.status).toBe(200);
    out.push(...(res.body.Items as RecordedEvent[]).map((e) => e.position));
    token = res.body.NextToken as string;
  } while (token !== "");
  return out;
}

beforeAll(() => serve.start());

afterAll(async () => {
  for (const c of clients) c.close();
  await follower?.kill("SIGKILL");
  await serve.stop();
});

it("a client resuming with its last id, and shoal events --follow, see every event once across a kill -9", async () => {
  for (let i = 0; i < 5; i++) await api.submit(shellJob("busybox", "true"));
  follower = ShoalProcess.start([
    "events",
    "--follow",
    "--after",
    "0",
    "--output",
    "ndjson",
    "--api-port",
    String(serve.apiPort),
    "--api-key",
    adminKey(),
  ]);
  const first = await openSse(`${url()}/api/v1/orchestrator/events/stream?after=0`, { headers: auth() });
  clients.push(first);
  expect(first.status).toBe(200);
  await first.until((m) => m.length >= 10);

  // The CLI is following too before the kill (its process takes a moment to start).
  await waitFor(
    () => follower!.stdout.split("\n").length > 10,
    60_000,
    () => `shoal events --follow printed nothing; stderr: ${follower!.stderr}`,
  );
  const jobs = submitting();
  await first.until((m) => m.length >= 40);
  await serve.kill("SIGKILL");
  await first.ended;
  const before = dataIds(first.messages);
  expect(before.length).toBeGreaterThanOrEqual(40);

  await serve.start();
  // The id of the last message it received: what an EventSource sends when it reconnects.
  const second = await openSse(`${url()}/api/v1/orchestrator/events/stream?after=0`, {
    headers: { ...auth(), "last-event-id": String(before.at(-1)) },
  });
  clients.push(second);
  expect(second.status).toBe(200);
  await second.until((m) => m.length >= 40);
  expect(await jobs.stop()).toBeGreaterThan(10);

  const feed = await feedIds();
  const last = feed.at(-1)!;
  await second.until((m) => dataIds(m).includes(last));
  const received = [...before, ...dataIds(second.messages)];
  expect(received.slice(0, feed.length)).toEqual(feed);
  // Stored after the kill or not, nothing came twice.
  expect(new Set(received).size).toBe(received.length);

  // The CLI reconnected by itself, after the last event it printed.
  await waitFor(
    () => follower!.stdout.split("\n").filter((l) => l !== "").length >= feed.length,
    60_000,
    () => `shoal events --follow printed ${follower!.stdout.split("\n").length} lines; stderr: ${follower!.stderr}`,
  );
  const printed = follower!.stdout
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => (JSON.parse(l) as RecordedEvent).position);
  expect(printed.slice(0, feed.length)).toEqual(feed);
  expect(new Set(printed).size).toBe(printed.length);
  expect(follower!.stderr).toMatch(/reconnecting in \d+ ms after position \d+/);
  follower!.child.kill("SIGINT");
  expect(await follower!.exited).toBe(0);
}, 180_000);
