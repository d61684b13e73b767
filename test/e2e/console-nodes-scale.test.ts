import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contextSignedIn, launchChromium, pageProblems, screenshot } from "../support/browser.ts";
import { tempDir } from "../support/fixtures.ts";
import { LocalServe } from "../support/local-serve.ts";
import { seedNodes } from "../support/seed-nodes.ts";

const SUITE = "console-nodes-scale";
/** Ten pages of the list's 100: far more than a screen holds. */
const NODES = 1_000;
const nodeId = (i: number) => `scale-n-${String(i).padStart(4, "0")}`;
const LAST = nodeId(NODES - 1);
/** The orchestrator's own node (node-0, a requester) is listed too, first. */
const LISTED = NODES + 1;
/** The burst: one event each, on the nodes at the end of the list (those on screen once it is scrolled there). */
const BURST = 300;
/** A screen of rows and the margins above and below it; far fewer than the rows loaded. */
const MOST_ROWS_DRAWN = 60;
const STEP_MS = 20_000;

/**
 * The node list at more nodes than fit on a screen, in Debian's chromium against a real `shoal serve` whose store
 * holds 1,000 registered nodes (written before it starts, test/support/seed-nodes.ts): the DOM holds only a window of
 * rows, the keyboard scrolls to the last node, a burst of node events is a bounded number of list reads, a bad label
 * selector shows its error and no rows (and the page does not claim to be live), and the filters live in the URL.
 */
describe("the console's node list at scale", { timeout: 120_000 }, () => {
  const serve = new LocalServe(tempDir("shoal-e2e-console-scale-"), [
    // The seeded nodes never heartbeat: none may turn UNHEALTHY (an event of its own) while the test counts reads.
    "Orchestrator.NodeManager.DisconnectTimeout=1h",
    "Orchestrator.NodeManager.UnknownTimeout=2h",
  ]);
  let browser: Browser;
  let page: Page;
  let problems: string[];
  /** The list reads the page made (GET …/nodes?…), the approval queue's included. */
  let listReads = 0;
  const rowsDrawn = () => page.locator("table.nodes tbody tr[aria-rowindex]").count();
  const rowCount = () => page.locator("table.nodes").getAttribute("aria-rowcount");

  beforeAll(async () => {
    await seedNodes(
      serve.dataDir,
      Array.from({ length: NODES }, (_, index) => ({ nodeId: nodeId(index), index })),
      false,
    );
    browser = await launchChromium();
    await serve.start();
    const context = await contextSignedIn(browser, serve.adminKey());
    page = await context.newPage();
    problems = pageProblems(page);
    page.on("request", (request) => {
      if (new URL(request.url()).pathname === "/api/v1/orchestrator/nodes") listReads++;
    });
  });

  afterAll(async () => {
    await browser?.close();
    await serve.stop();
  });

  it("draws only a window of the rows it has read", async () => {
    await page.goto(`${serve.url()}/ui/nodes`);
    await page.getByRole("rowheader", { name: nodeId(0) }).waitFor({ timeout: STEP_MS });
    await page.getByText("Live: updated as events are stored.").waitFor({ timeout: STEP_MS });
    await page.getByText("100 nodes read so far; more are read as you scroll.").waitFor({ timeout: STEP_MS });
    expect(await rowsDrawn()).toBeLessThanOrEqual(MOST_ROWS_DRAWN);
    expect(await rowsDrawn()).toBeGreaterThan(5);
    // More may follow: the count is not known yet.
    expect(await rowCount()).toBe("-1");
    await expect(
      page.locator("table.nodes tbody tr[aria-rowindex]").first().getAttribute("aria-rowindex"),
    ).resolves.toBe("2");
    await screenshot(page, SUITE, "1-first-screen");
  });

  it("lets Tab go through the rows' links past the window and the first page, in order", async () => {
    await page.getByRole("region", { name: "Nodes (scrolls)" }).focus();
    // The orchestrator's own node-0 comes first.
    for (let i = 0; i < 60; i++) await page.keyboard.press("Tab");
    // Faster than any reader: let the next page, asked for 50 rows ahead, arrive.
    await page.getByText("200 nodes read so far").waitFor({ timeout: STEP_MS });
    for (let i = 60; i < 121; i++) await page.keyboard.press("Tab");
    await expect(page.evaluate("document.activeElement.textContent")).resolves.toBe(nodeId(119));
    expect(await rowsDrawn()).toBeLessThanOrEqual(MOST_ROWS_DRAWN);
  });

  it("has the next row drawn for Tab even before the scroll that follows the focus is heard", async () => {
    const drawn = page.locator("table.nodes tbody tr[aria-rowindex]");
    const lastDrawn = Number(await drawn.last().getAttribute("aria-rowindex"));
    // Focused without scrolling: as when keys come faster than the scroll events they cause.
    await drawn
      .last()
      .locator("a")
      .evaluate((link) => (link as unknown as { focus(o: object): void }).focus({ preventScroll: true }));
    await page.keyboard.press("Tab");
    await expect(page.evaluate("document.activeElement.closest('tr')?.getAttribute('aria-rowindex')")).resolves.toBe(
      String(lastDrawn + 1),
    );
  });

  it("scrolls to the last node with the keyboard, still drawing only a window", async () => {
    const scroller = page.getByRole("region", { name: "Nodes (scrolls)" });
    await scroller.focus();
    // Each End reaches the rows read so far, and the next page is read on the way: press it again once it is there.
    const countLine = page.locator(".list-count");
    const complete = `${LISTED.toLocaleString("en")} nodes.`;
    for (let line = await countLine.textContent(); line?.trim() !== complete;) {
      await page.keyboard.press("End");
      const before = line;
      for (
        const until = Date.now() + STEP_MS;
        line === before && Date.now() < until;
        line = await countLine.textContent()
      )
        await page.waitForTimeout(100);
      expect(line, "the rows read after End").not.toBe(before);
    }
    await page.keyboard.press("End");
    const last = page.getByRole("rowheader", { name: LAST });
    await last.waitFor({ timeout: STEP_MS });
    await expect(last.isVisible()).resolves.toBe(true);
    expect(await rowsDrawn()).toBeLessThanOrEqual(MOST_ROWS_DRAWN);
    // The header is row 1.
    expect(await rowCount()).toBe(String(LISTED + 1));
    await expect(page.getByRole("row").filter({ has: last }).getAttribute("aria-rowindex")).resolves.toBe(
      String(LISTED + 1),
    );
    await screenshot(page, SUITE, "2-scrolled-to-the-end");
  });

  it("reads the list a bounded number of times for a burst of node events, and shows what they did", async () => {
    const readsBefore = listReads;
    const started = performance.now();
    const cordon = async (i: number) => {
      const res = await fetch(`${serve.url()}/api/v1/orchestrator/nodes/${nodeId(i)}`, {
        method: "PUT",
        headers: { authorization: `Bearer ${serve.adminKey()}`, "content-type": "application/json" },
        body: JSON.stringify({ Action: "cordon", Message: "burst" }),
      });
      expect(res.status, await res.text()).toBe(200);
    };
    for (let from = NODES - BURST; from < NODES; from += 25)
      await Promise.all(Array.from({ length: 25 }, (_, k) => cordon(from + k)));
    // The last event's refresh: the last node on screen shows its cordon.
    await page.getByRole("row").filter({ hasText: LAST }).getByText("cordoned", { exact: true }).waitFor({
      timeout: STEP_MS,
    });
    // Anything still paced after it.
    await page.waitForTimeout(2_500);
    const seconds = (performance.now() - started) / 1000;
    const reads = listReads - readsBefore;
    // At most one refresh a second (and one more at each end), each the two pages on screen and the approval queue.
    expect(reads).toBeLessThanOrEqual(3 * (Math.ceil(seconds) + 2));
    expect(reads).toBeLessThan(BURST / 10);
    expect(await rowsDrawn()).toBeLessThanOrEqual(MOST_ROWS_DRAWN);
    await screenshot(page, SUITE, "3-after-the-burst");
  });

  it("shows a bad label selector's error with no rows and does not say Live; a good one brings them back", async () => {
    const selector = page.getByRole("textbox", { name: "Label selector" });
    await selector.fill("zone in (");
    await selector.press("Enter");
    await page.getByRole("alert").waitFor({ timeout: STEP_MS });
    await page.getByText("Not current: the last read failed.").waitFor({ timeout: STEP_MS });
    expect(await rowsDrawn()).toBe(0);
    await expect(page.getByText("Live: updated as events are stored.").count()).resolves.toBe(0);
    await screenshot(page, SUITE, "4-bad-selector");
    // A reload keeps the filter, and so the error.
    expect(new URL(page.url()).searchParams.get("labels")).toBe("zone in (");
    await page.reload();
    await page.getByRole("alert").waitFor({ timeout: STEP_MS });
    await expect(selector.inputValue()).resolves.toBe("zone in (");

    await selector.fill("rack=rack-7");
    await selector.press("Enter");
    await page.getByRole("rowheader", { name: nodeId(7) }).waitFor({ timeout: STEP_MS });
    await page.getByText("Live: updated as events are stored.").waitFor({ timeout: STEP_MS });
    await expect(page.getByRole("alert").count()).resolves.toBe(0);
    await page.getByText("20 nodes.").waitFor({ timeout: STEP_MS });
  });

  it("keeps the filters in the URL: a link opens the same list", async () => {
    await page.getByRole("combobox", { name: "Cordoned" }).selectOption("true");
    await page.getByText("6 nodes.").waitFor({ timeout: STEP_MS });
    const link = page.url();
    expect(new URL(link).searchParams.get("filter-cordoned")).toBe("true");
    expect(new URL(link).searchParams.get("labels")).toBe("rack=rack-7");

    const other = await contextSignedIn(browser, serve.adminKey());
    const reader = await other.newPage();
    await reader.goto(link);
    await reader.getByText("6 nodes.").waitFor({ timeout: STEP_MS });
    await expect(reader.getByRole("combobox", { name: "Cordoned" }).inputValue()).resolves.toBe("true");
    await expect(reader.getByRole("textbox", { name: "Label selector" }).inputValue()).resolves.toBe("rack=rack-7");
    await other.close();
  });

  it("logged no error but the refused selector's, and broke no content security rule", () => {
    // The browser logs each refused request itself: the bad selector's, before and after the reload.
    expect(problems.filter((p) => !p.includes("status of 400 (Bad Request)"))).toEqual([]);
  });
});
