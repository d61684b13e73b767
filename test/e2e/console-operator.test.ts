import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, pageProblems, screenshot } from "../support/browser.ts";
import { startComputeProcess } from "../support/compute-processes.ts";
import { tempDir } from "../support/fixtures.ts";
import { LocalServe } from "../support/local-serve.ts";
import { runShoal, type ShoalProcess } from "../support/shoal-process.ts";
import { auditSigningKey } from "../../src/events/chain/audit-checkpoint.ts";

const SUITE = "console-operator";
const EXPECTED = "console-pre-1";
const CANCELLED = "console-pre-2";
/** Long enough for a loaded two-core machine; a step that never happens still fails with what was on the page. */
const STEP_MS = 20_000;

/**
 * The console's operator pages in Debian's chromium, against a real `shoal serve` under manual approval: signing in
 * from a filtered page (the key's field focused) and coming back to it; node ids
 * pre-authorised with a reason, one revoked, the other joining approved and leaving the list; the audit chain verified
 * in the page, holding, then broken at the row edited while the orchestrator was stopped, as the CLI finds it.
 */
describe("the web console's operator pages in a browser", { timeout: 180_000 }, () => {
  // A checkpoint every few events, so that there are some to check (and a key to trust) within the test.
  const serve = new LocalServe(tempDir("shoal-e2e-console-operator-"), [
    "Orchestrator.NodeManager.ManualApproval=true",
    "Orchestrator.Audit.CheckpointEvery=2",
  ]);
  let compute: ShoalProcess | undefined;
  let browser: Browser;
  let page: Page;
  let problems: string[];
  /** The paths of the scripts the browser fetched. */
  const scripts: string[] = [];
  const ui = (path = "") => `${serve.url()}/ui/${path}`;

  beforeAll(async () => {
    [browser] = await Promise.all([launchChromium(), serve.start()]);
    page = await browser.newPage({ viewport: { width: 1280, height: 800 }, timezoneId: "UTC" });
    problems = pageProblems(page);
    page.on("request", (r) => {
      if (r.resourceType() === "script") scripts.push(new URL(r.url()).pathname);
    });
  });

  afterAll(async () => {
    await browser?.close();
    if (compute?.child.exitCode === null) await compute.kill("SIGTERM");
    if (serve.running) await serve.kill("SIGTERM");
  });

  it("pre-authorises node ids with a reason, lists them, revokes one, and drops the other once it joins", async () => {
    // Anonymous on a filtered job list: no pre-authorisation; signing in starts in the key's field and comes back.
    await page.goto(ui("jobs?order_by=id"));
    const nav = page.getByRole("navigation", { name: "Main" });
    await nav.getByRole("link", { name: "Nodes" }).waitFor({ timeout: STEP_MS });
    await expect(nav.getByRole("link", { name: "Pre-authorised" }).count()).resolves.toBe(0);
    await page.getByRole("button", { name: "Sign in" }).click();
    const focused = "document.activeElement?.getAttribute('name')";
    await expect.poll(() => page.evaluate(focused), { timeout: STEP_MS }).toBe("api-key");
    await page.keyboard.type(serve.adminKey());
    await page.keyboard.press("Enter");
    await page.getByText(/^Signed in as/).waitFor({ timeout: STEP_MS });
    expect(page.url()).toBe(ui("jobs?order_by=id"));
    await expect(page.getByRole("combobox", { name: "Order by" }).inputValue()).resolves.toBe("id");
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

  it("verifies the audit chain in the page, and finds the row edited while stopped, as the CLI does", async () => {
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Audit" }).click();
    // The feed's filters are kept in the address: a reload shows the same selection.
    const feed = page.getByRole("form", { name: "Filter events" });
    await feed.getByRole("textbox", { name: "Event type" }).fill("NodePreauthorized");
    await feed.getByRole("button", { name: "Apply" }).click();
    await page.waitForURL(ui("audit?type=NodePreauthorized"));
    await page.reload();
    await expect(feed.getByRole("textbox", { name: "Event type" }).inputValue()).resolves.toBe("NodePreauthorized");
    await expect
      .poll(() => page.getByRole("table", { name: "Events" }).getByRole("rowheader").allTextContents(), {
        timeout: STEP_MS,
      })
      .toEqual(["NodePreauthorized", "NodePreauthorized"]);
    // The verification code is no part of the pages: it is fetched on the first Verify.
    const verification = () => scripts.filter((path) => path.startsWith("/ui/assets/verify-over-api-"));
    expect(verification()).toEqual([]);
    const form = page.getByRole("form", { name: "Verify the chain" });
    await form.getByRole("button", { name: "Verify" }).click();
    const held = page.getByRole("status").filter({ hasText: "Not altered" });
    await held.waitFor({ timeout: STEP_MS });
    expect(verification()).toHaveLength(1);
    await expect(held.textContent()).resolves.toMatch(
      new RegExp(
        String.raw`^Not altered: the chain holds: (\d+) events checked through position \1; [1-9]\d* signed ` +
          String.raw`checkpoints? matched\..*the checkpoints checked are the store's own`,
      ),
    );
    await screenshot(page, SUITE, "3-chain-holds");

    // A key the checkpoints were not signed by: the page trusts only what it is given.
    await form.getByRole("textbox", { name: /^Trusted keys/ }).fill(auditSigningKey(randomBytes(32)).publicKey);
    await form.getByRole("button", { name: "Verify" }).click();
    const untrusted = page.getByRole("alert").filter({ hasText: "checkpoint-key" });
    await untrusted.waitFor({ timeout: STEP_MS });
    await expect(untrusted.textContent()).resolves.toMatch(/which is not one of the keys given/);

    await serve.kill("SIGTERM");
    const file = join(serve.dataDir, "shoal.db");
    const db = new Database(file);
    const row = db
      .prepare("SELECT position, stream, revision FROM events WHERE type = 'NodePreauthorized' AND stream = ?")
      .get(`node-${EXPECTED}`) as { position: number; stream: string; revision: number };
    db.prepare("UPDATE events SET data = json_set(data, '$.Reason', 'never checked') WHERE position = ?").run(
      row.position,
    );
    db.close();
    const cli = await runShoal(["audit", "verify", "--store", file, "--quiet"]);
    expect(cli.code, cli.stderr).toBe(1);
    await serve.start();

    await page.reload();
    await form.getByRole("button", { name: "Verify" }).click();
    const broken = page.getByRole("alert").filter({ hasText: "Broken at position" });
    await broken.waitFor({ timeout: STEP_MS });
    await expect(broken.getByRole("paragraph").allTextContents()).resolves.toEqual([
      `Broken at position ${row.position} (${row.stream}@${row.revision}): edited`,
      expect.stringMatching(new RegExp(`^the event at position ${row.position} \\(${row.stream}@${row.revision}\\)`)),
      `The chain held through position ${row.position - 1} (${row.position - 1} events checked).`,
    ]);
    // The CLI's verdict on the same file, word for word.
    const [brokenLine, heldLine] = cli.stdout.trim().split("\n");
    const message = await broken.getByRole("paragraph").nth(1).textContent();
    expect(brokenLine).toBe(`BROKEN at position ${row.position} (${row.stream}@${row.revision}): edited: ${message}`);
    expect(heldLine).toBe(`the chain held through position ${row.position - 1} (${row.position - 1} events checked)`);
    await screenshot(page, SUITE, "4-chain-broken");
  });

  it("logged no error and broke no content security rule on the way", () => {
    expect(problems).toEqual([]);
  });
});
