import { readFileSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, pageProblems, screenshot, signInWithKey } from "../support/browser.ts";
import { startComputeProcess } from "../support/compute-processes.ts";
import { tempDir } from "../support/fixtures.ts";
import { LocalServe } from "../support/local-serve.ts";
import type { ShoalProcess } from "../support/shoal-process.ts";

const SUITE = "console-operator";
const EXPECTED = "console-pre-1";
const CANCELLED = "console-pre-2";
/** Long enough for a loaded two-core machine; a step that never happens still fails with what was on the page. */
const STEP_MS = 20_000;

/**
 * The console's operator pages in Debian's chromium, against a real `shoal serve` under manual approval: node ids
 * pre-authorised with a reason, one revoked, the other joining approved and leaving the list.
 */
describe("the web console's operator pages in a browser", { timeout: 180_000 }, () => {
  const serve = new LocalServe(tempDir("shoal-e2e-console-operator-"), [
    "Orchestrator.NodeManager.ManualApproval=true",
  ]);
  let compute: ShoalProcess | undefined;
  let browser: Browser;
  let page: Page;
  let problems: string[];
  const ui = (path = "") => `${serve.url()}/ui/${path}`;

  beforeAll(async () => {
    [browser] = await Promise.all([launchChromium(), serve.start()]);
    page = await browser.newPage({ viewport: { width: 1280, height: 800 }, timezoneId: "UTC" });
    problems = pageProblems(page);
  });

  afterAll(async () => {
    await browser?.close();
    if (compute?.child.exitCode === null) await compute.kill("SIGTERM");
    if (serve.running) await serve.kill("SIGTERM");
  });

  it("pre-authorises node ids with a reason, lists them, revokes one, and drops the other once it joins", async () => {
    await page.goto(ui("nodes"));
    const nav = page.getByRole("navigation", { name: "Main" });
    await nav.getByRole("link", { name: "Nodes" }).waitFor({ timeout: STEP_MS });
    await expect(nav.getByRole("link", { name: "Pre-authorised" }).count()).resolves.toBe(0);
    await signInWithKey(page, serve.adminKey(), STEP_MS);
    await nav.getByRole("link", { name: "Pre-authorised" }).click();
    await page.waitForURL(ui("preauthorized"));

    const form = page.getByRole("form", { name: "Pre-authorise a node" });
    const list = page.getByRole("table", { name: /^Pre-authorised node ids/ });
    await list.getByText("No node id is pre-authorised").waitFor({ timeout: STEP_MS });
    for (const [id, reason] of [
      [EXPECTED, "rack 7 delivery"],
      [CANCELLED, "second box of the order"],
    ] as const) {
      await form.getByRole("textbox", { name: "Node id" }).fill(id);
      await form.getByRole("textbox", { name: "Reason" }).fill(reason);
      await form.getByRole("button", { name: "Pre-authorise" }).click();
      await form
        .getByRole("status")
        .filter({ hasText: `Pre-authorised ${id}` })
        .waitFor({ timeout: STEP_MS });
      await list.getByRole("row").filter({ hasText: reason }).waitFor({ timeout: STEP_MS });
    }
    await expect(list.getByRole("rowheader").allTextContents()).resolves.toEqual([EXPECTED, CANCELLED]);
    await expect(list.getByRole("row").filter({ hasText: EXPECTED }).textContent()).resolves.toMatch(
      /any \(the id alone\)rack 7 deliveryoperator:\S+/,
    );
    await screenshot(page, SUITE, "1-preauthorized");

    await page.getByRole("textbox", { name: `Reason for revoking ${CANCELLED}` }).fill("order cancelled");
    await page.getByRole("button", { name: `Revoke ${CANCELLED}` }).click();
    await expect.poll(() => list.getByRole("rowheader").allTextContents(), { timeout: STEP_MS }).toEqual([EXPECTED]);
    const revoked = await fetch(`${serve.url()}/api/v1/orchestrator/nodes/${CANCELLED}/history`, {
      headers: { authorization: `Bearer ${serve.adminKey()}` },
    });
    expect(JSON.stringify(await revoked.json())).toMatch(/NodePreauthorizationRevoked.*order cancelled/);

    // The node joins: approved at once (no pending queue), and gone from the list, live.
    compute = startComputeProcess({
      nodeId: EXPECTED,
      dataDir: tempDir("shoal-e2e-console-operator-compute-"),
      orchestrators: serve.natsUrl,
      token: readFileSync(serve.joinTokenFile, "utf8").trim(),
    });
    await list.getByText("No node id is pre-authorised").waitFor({ timeout: STEP_MS });
    await nav.getByRole("link", { name: "Nodes" }).click();
    const row = page.getByRole("row").filter({ has: page.getByRole("rowheader", { name: EXPECTED }) });
    await row.getByText("approved", { exact: true }).waitFor({ timeout: STEP_MS });
    await screenshot(page, SUITE, "2-joined");
  });

  it("logged no error and broke no content security rule on the way", () => {
    expect(problems).toEqual([]);
  });
});
