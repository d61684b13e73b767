/**
 * The web console's node list in a real browser at 10,000 nodes, against the same page on a 100-node cluster in the
 * same run: how long `/ui/nodes` takes to show its first screen of rows.
 *
 * Two real `shoal serve` processes (the compiled CLI, each with its own nats-server and SQLite store) run side by
 * side, one with the large fleet and one with the small. Their nodes are registered in the store before they start,
 * through the actor host and node decider the orchestrator uses (test/support/seed-nodes.ts), and recovered on
 * start, as after a restart. Debian's chromium (playwright-core, test/support/browser.ts) opens `/ui/nodes` signed
 * in with the admin key (so the page follows the event stream, as an operator's does), each time in a fresh browser
 * context (nothing cached), alternating the two clusters (ABBA) after one warm-up load of each.
 *
 * First screen: the page's own clock (performance.now(), whose origin is the navigation's start) when the first row
 * of the list is in the document, read on the next animation frame (so it has been laid out and painted).
 *
 * Then, on the large fleet only: the list read to its end by scrolling (the time, and the most rows the DOM held on
 * the way), and a burst of cordons over the API on the nodes on screen: the page's list reads per second from the
 * first cordon until the last node shows its cordon and 2.5 s after.
 *
 *   npx tsx bench/console-nodes.ts [nodes=10000] [rounds=4]
 *   npm run bench -- --only console-nodes --set console-nodes.nodes=10000
 *
 * Knobs: console-nodes.nodes, console-nodes.baselineNodes (100), console-nodes.rounds (4: each cluster loaded twice a
 * round), console-nodes.burst (1,000 cordons).
 */
import type { Browser } from "playwright-core";
import { contextSignedIn, launchChromium } from "../test/support/browser.ts";
import { runStandalone, setting, type BenchOptions, type BenchResult } from "./bench-result.ts";
import { freePort } from "./support/free-port.ts";
import { quantile } from "./support/quantile.ts";
import { seedNodes } from "../test/support/seed-nodes.ts";
import { serveOrchestrator, type ServedOrchestrator } from "./support/shoal-serve.ts";

/** The target: the first screen within a second on this machine. */
const TARGET_FIRST_SCREEN_MS = 1_000;
const VIEWPORT = { width: 1280, height: 800 };
/** After the last event's refresh: the pacing interval (1 s) and a margin, for any read still to come. */
const BURST_SETTLE_MS = 2_500;
/** A screen of rows and the margins drawn above and below it. */
const TARGET_ROWS_DRAWN = 100;
/** One refresh a second: the two pages a screen may span and the approval queue. */
const TARGET_BURST_READS_PER_S = 3;
/** The first row of the node list: its row header. */
const FIRST_ROW = "table.nodes tbody tr th[scope=row] a";

const nodeIdAt = (index: number) => `cn-${String(index).padStart(6, "0")}`;

/** A served orchestrator whose store holds `nodes` approved compute nodes that never connected. */
async function fleet(nodes: number, options: BenchOptions): Promise<ServedOrchestrator> {
  return serveOrchestrator(
    {
      // Two run side by side (and other engineers' orchestrators may hold the default port).
      "Orchestrator.Port": await freePort(),
      // The seeded nodes never heartbeat: none may turn UNHEALTHY (a write, and an event on the stream) meanwhile.
      "Orchestrator.NodeManager.DisconnectTimeout": "1h",
      "Orchestrator.NodeManager.UnknownTimeout": "2h",
    },
    {
      prepare: async (dataDir) => {
        const t0 = performance.now();
        const ids = Array.from({ length: nodes }, (_, index) => ({
          nodeId: nodeIdAt(index),
          index,
        }));
        const events = await seedNodes(dataDir, ids, false);
        options.log(`  seeded ${nodes} nodes (${events} events) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      },
      readyTimeoutMs: 180_000,
    },
  );
}

/** One cold load of /ui/nodes: ms from the navigation's start to the first row painted. */
async function firstScreen(browser: Browser, orchestrator: ServedOrchestrator): Promise<number> {
  const context = await contextSignedIn(browser, orchestrator.adminKey, VIEWPORT);
  try {
    const page = await context.newPage();
    await page.goto(`${orchestrator.apiUrl}/ui/nodes`, { waitUntil: "commit" });
    // A function, not a string (the console's CSP forbids eval); this file is type-checked without the DOM's types.
    const handle = await page.waitForFunction(
      (selector: string) => {
        const { document } = globalThis as unknown as { document: { querySelector(s: string): object | null } };
        return document.querySelector(selector) === null ? false : performance.now();
      },
      FIRST_ROW,
      { polling: "raf", timeout: 60_000 },
    );
    return (await handle.jsonValue()) as number;
  } finally {
    await context.close();
  }
}

/** What reading the whole list by scrolling, then a burst of node events on the rows on screen, cost the page. */
interface ScrollAndBurst {
  readonly readToEndMs: number;
  readonly pagesRead: number;
  readonly mostRowsDrawn: number;
  readonly burstSeconds: number;
  readonly burstReads: number;
}

/**
 * Opens /ui/nodes, scrolls its list to the bottom again and again until every node is read (the page reads the
 * next page as the window nears the end), sampling how many rows the DOM holds; then cordons the `burst` nodes at the
 * end of the list (on screen), 50 at a time over the API, and counts the page's list reads from the first cordon
 * until the last node on screen shows its cordon, plus the pacing interval and a margin after it.
 */
async function scrollAndBurst(
  browser: Browser,
  orchestrator: ServedOrchestrator,
  nodeIds: readonly string[],
  burst: number,
): Promise<ScrollAndBurst> {
  const context = await contextSignedIn(browser, orchestrator.adminKey, VIEWPORT);
  try {
    const page = await context.newPage();
    let reads = 0;
    page.on("request", (request) => {
      if (new URL(request.url()).pathname === "/api/v1/orchestrator/nodes") reads++;
    });
    await page.goto(`${orchestrator.apiUrl}/ui/nodes`);
    await page.getByText("Live: updated as events are stored.").waitFor({ timeout: 60_000 });
    await page.locator(FIRST_ROW).first().waitFor({ timeout: 60_000 });
    const scroller = page.getByRole("region", { name: "Nodes (scrolls)" });
    const countLine = page.locator(".list-count");
    const drawn = page.locator("table.nodes tbody tr[aria-rowindex]");
    // The orchestrator's own node (a requester) is listed too.
    const complete = `${(nodeIds.length + 1).toLocaleString("en")} nodes.`;
    const readsBefore = reads;
    const t0 = performance.now();
    let mostRowsDrawn = 0;
    while ((await countLine.textContent())?.trim() !== complete) {
      // Its element's type is the DOM's, which this file is checked without.
      await scroller.evaluate((element: { scrollTop: number; scrollHeight: number }) => {
        element.scrollTop = element.scrollHeight;
      });
      await page.waitForTimeout(20);
      mostRowsDrawn = Math.max(mostRowsDrawn, await drawn.count());
      if (performance.now() - t0 > 300_000)
        throw new Error(`the list was not read to its end: ${await countLine.textContent()}`);
    }
    const readToEndMs = performance.now() - t0;
    const pagesRead = reads - readsBefore;

    const last = nodeIds[nodeIds.length - 1]!;
    const cordon = async (nodeId: string) => {
      const res = await fetch(`${orchestrator.apiUrl}/api/v1/orchestrator/nodes/${nodeId}`, {
        method: "PUT",
        headers: { authorization: `Bearer ${orchestrator.adminKey}`, "content-type": "application/json" },
        body: JSON.stringify({ Action: "cordon", Message: "bench burst" }),
      });
      if (res.status !== 200) throw new Error(`cordon ${nodeId}: ${res.status} ${await res.text()}`);
    };
    const burstIds = nodeIds.slice(-burst);
    const burstReadsBefore = reads;
    const b0 = performance.now();
    for (let from = 0; from < burstIds.length; from += 50)
      await Promise.all(burstIds.slice(from, from + 50).map(cordon));
    await page
      .getByRole("row")
      .filter({ hasText: last })
      .getByText("cordoned", { exact: true })
      .waitFor({ timeout: 60_000 });
    const burstSeconds = (performance.now() - b0) / 1000;
    await page.waitForTimeout(BURST_SETTLE_MS);
    mostRowsDrawn = Math.max(mostRowsDrawn, await drawn.count());
    return { readToEndMs, pagesRead, mostRowsDrawn, burstSeconds, burstReads: reads - burstReadsBefore };
  } finally {
    await context.close();
  }
}

const median = (values: readonly number[]) =>
  quantile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
const round1 = (ms: number) => Math.round(ms * 10) / 10;

export async function run(options: BenchOptions): Promise<BenchResult> {
  const nodes = setting(options, "console-nodes.nodes", options.quick ? 1_000 : 10_000);
  const baselineNodes = setting(options, "console-nodes.baselineNodes", 100);
  const rounds = setting(options, "console-nodes.rounds", options.quick ? 1 : 4);
  const burst = setting(options, "console-nodes.burst", options.quick ? 100 : 1_000);

  const large = await fleet(nodes, options);
  let small: ServedOrchestrator | undefined;
  let browser: Browser | undefined;
  try {
    small = await fleet(baselineNodes, options);
    browser = await launchChromium();
    // Warm-up: the orchestrators' routes and the browser's own start-up, not timed.
    await firstScreen(browser, large);
    await firstScreen(browser, small);
    const times = { large: [] as number[], small: [] as number[] };
    for (let r = 0; r < rounds; r++) {
      // ABBA: neither side always meets the load first.
      const order =
        r % 2 === 0 ? (["large", "small", "small", "large"] as const) : (["small", "large", "large", "small"] as const);
      for (const side of order) times[side].push(await firstScreen(browser, side === "large" ? large : small));
      const latest = (side: readonly number[]) => side.slice(-2).map(round1).join(", ");
      options.log(
        `  round ${r + 1}: ${nodes} nodes ${latest(times.large)} ms; ${baselineNodes} nodes ${latest(times.small)} ms`,
      );
    }
    options.log(`  reading all ${nodes} by scrolling, then a burst of ${burst} cordons on the rows on screen`);
    const scale = await scrollAndBurst(
      browser,
      large,
      Array.from({ length: nodes }, (_, i) => nodeIdAt(i)),
      burst,
    );
    options.log(`    ${JSON.stringify(scale)}`);
    const burstWindow = scale.burstSeconds + BURST_SETTLE_MS / 1000;
    const largeMs = round1(median(times.large));
    const smallMs = round1(median(times.small));
    const range = (values: readonly number[]) => `${round1(Math.min(...values))}–${round1(Math.max(...values))} ms`;
    return {
      parameters: { nodes, baselineNodes, rounds, loadsEach: times.large.length, burst },
      figures: [
        {
          name: `first screen of /ui/nodes at ${nodes.toLocaleString("en")} nodes`,
          value: largeMs,
          unit: "ms",
          baseline: { name: `the same page at ${baselineNodes} nodes`, value: smallMs },
          target: { on: "value", max: TARGET_FIRST_SCREEN_MS },
          note: `median of ${times.large.length} cold loads (${range(times.large)}); baseline ${range(times.small)}`,
        },
        {
          name: `every node read by scrolling to the end`,
          value: Math.round(scale.readToEndMs),
          unit: "ms",
          note: `${scale.pagesRead} list reads, ${round1(scale.readToEndMs / Math.max(1, scale.pagesRead))} ms each`,
        },
        {
          name: "rows in the DOM at most",
          value: scale.mostRowsDrawn,
          unit: "rows",
          target: { on: "value", max: TARGET_ROWS_DRAWN },
          note: `sampled while scrolling through all ${nodes.toLocaleString("en")} and after the burst`,
        },
        {
          name: `list reads during a burst of ${burst} node events`,
          value: round1(scale.burstReads / burstWindow),
          unit: "/s",
          target: { on: "value", max: TARGET_BURST_READS_PER_S },
          note: `${scale.burstReads} reads in ${round1(burstWindow)} s (the cordons ${round1(scale.burstSeconds)} s)`,
        },
      ],
    };
  } finally {
    await browser?.close();
    await small?.stop();
    await large.stop();
  }
}

await runStandalone(import.meta.url, run, ["console-nodes.nodes", "console-nodes.rounds"]);
