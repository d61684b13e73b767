import { readFileSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, pageProblems, screenshot } from "../support/browser.ts";
import { startComputeProcess } from "../support/compute-processes.ts";
import { tempDir } from "../support/fixtures.ts";
import { LocalServe } from "../support/local-serve.ts";
import type { ShoalProcess } from "../support/shoal-process.ts";

const SUITE = "console";
const NODE = "console-n-1";
/** Long enough for a loaded two-core machine; a step that never happens still fails with what was on the page. */
const STEP_MS = 20_000;

/**
 * The web console in Debian's chromium, against a real `shoal serve` (manual approval, anonymous read allowed, its
 * generated admin key) and a real `shoal compute`: anonymous read shows the pending node and no action; signed in
 * with the key, the operator approves it with a reason, sees the reason in its history, cordons it, and sees an
 * uncordon made elsewhere arrive live.
 */
describe("the web console in a browser", { timeout: 180_000 }, () => {
  const serve = new LocalServe(tempDir("shoal-e2e-console-"), ["Orchestrator.NodeManager.ManualApproval=true"]);
  let compute: ShoalProcess | undefined;
  let browser: Browser;
  let page: Page;
  let problems: string[];
  const ui = (path = "") => `${serve.url()}/ui/${path}`;
  /** An operator's action through the API, as the CLI or another console would make it. */
  const operatorPut = async (id: string, body: unknown) => {
    const res = await fetch(`${serve.url()}/api/v1/orchestrator/nodes/${id}`, {
      method: "PUT",
      headers: { authorization: `Bearer ${serve.adminKey()}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(res.status, await res.text()).toBe(200);
  };

  beforeAll(async () => {
    browser = await launchChromium();
    await serve.start();
    compute = startComputeProcess({
      nodeId: NODE,
      dataDir: tempDir("shoal-e2e-console-compute-"),
      orchestrators: serve.natsUrl,
      token: readFileSync(serve.joinTokenFile, "utf8").trim(),
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    problems = pageProblems(page);
  });

  afterAll(async () => {
    await browser?.close();
    if (compute?.child.exitCode === null) await compute.kill("SIGTERM");
    if (serve.running) await serve.kill("SIGTERM");
  });

  it("shows an anonymous reader the pending node, and no action", async () => {
    await page.goto(ui());
    await page.waitForURL(ui("nodes"));
    const queue = page.getByRole("region", { name: /Waiting for approval/ });
    await queue.getByRole("link", { name: NODE }).waitFor({ timeout: STEP_MS });
    await expect(page.getByText("Anonymous (read only)").isVisible()).resolves.toBe(true);
    await expect(page.getByText("live updates need the read:history capability").isVisible()).resolves.toBe(true);
    await screenshot(page, SUITE, "1-anonymous");
    await expect(page.getByRole("button", { name: /^(Approve|Reject|Cordon|Uncordon|Drain)\b/ }).count()).resolves.toBe(
      0,
    );
    await expect(page.getByRole("textbox", { name: /^Reason/ }).count()).resolves.toBe(0);
  });

  it("refuses a wrong key, keeping nothing", async () => {
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("textbox", { name: "API key" }).fill("not-the-key-of-anyone-here");
    await page.getByRole("main").getByRole("button", { name: "Sign in" }).click();
    await expect(page.getByRole("alert").textContent({ timeout: STEP_MS })).resolves.toBe("invalid API key");
    await expect(page.evaluate("sessionStorage.length")).resolves.toBe(0);
    // The browser logs the refused request itself; that one is expected.
    expect(problems.splice(0)).toEqual([
      "console: Failed to load resource: the server responded with a status of 401 (Unauthorized)",
    ]);
  });

  it("signs in with the admin key, kept in the tab's session and never in the URL", async () => {
    await page.getByRole("textbox", { name: "API key" }).fill(serve.adminKey());
    await page.getByRole("main").getByRole("button", { name: "Sign in" }).click();
    await page.getByText(/^Signed in as/).waitFor({ timeout: STEP_MS });
    expect(page.url()).toBe(ui("nodes"));
    expect(page.url()).not.toContain(serve.adminKey());
    await expect(page.evaluate("JSON.stringify(sessionStorage)")).resolves.toContain(serve.adminKey());
    await page.getByText("Live: updated as events are stored.").waitFor({ timeout: STEP_MS });
  });

  it("approves the pending node with a reason, which its history shows with who gave it", async () => {
    await page.getByRole("textbox", { name: `Reason for ${NODE}` }).fill("serial number checked against the rack");
    await screenshot(page, SUITE, "2-pending");
    await page.getByRole("button", { name: `Approve ${NODE}` }).click();
    await page.getByRole("region", { name: /Waiting for approval/ }).waitFor({ state: "detached", timeout: STEP_MS });
    await page.getByRole("rowheader", { name: NODE }).getByRole("link").click();
    await page.waitForURL(ui(`nodes/${NODE}`));
    const approved = page.getByRole("listitem").filter({ hasText: "NodeApproved" });
    await approved.waitFor({ timeout: STEP_MS });
    await expect(approved.textContent()).resolves.toMatch(
      /NodeApproved by operator:\S+ .*serial number checked against the rack/,
    );
    await screenshot(page, SUITE, "3-approved");
  });

  it("cordons it with a reason, and sees an uncordon made elsewhere arrive live", async () => {
    await page.getByRole("textbox", { name: `Reason for ${NODE}` }).fill("disk swap on Tuesday");
    await page.getByRole("button", { name: `Cordon ${NODE}` }).click();
    await page.getByText("cordoned", { exact: true }).waitFor({ timeout: STEP_MS });
    await page.getByRole("listitem").filter({ hasText: "disk swap on Tuesday" }).waitFor({ timeout: STEP_MS });
    await page.getByRole("button", { name: `Uncordon ${NODE}` }).waitFor({ timeout: STEP_MS });
    await screenshot(page, SUITE, "4-cordoned");

    // Not through the page: only the event stream can tell it.
    await operatorPut(NODE, { Action: "uncordon", Message: "swap done early" });
    await page.getByRole("listitem").filter({ hasText: "swap done early" }).waitFor({ timeout: STEP_MS });
    await page.getByRole("button", { name: `Cordon ${NODE}` }).waitFor({ timeout: STEP_MS });
    await screenshot(page, SUITE, "5-uncordoned-live");
  });

  it("drains it with a deadline and a reason, and undrains it", async () => {
    await page.getByRole("textbox", { name: `Reason for ${NODE}` }).fill("rack power work");
    await page.getByRole("textbox", { name: `Drain deadline for ${NODE}` }).fill("10m");
    await page.getByRole("button", { name: `Drain ${NODE}` }).click();
    // Nothing runs on the node, so it may already be drained; either way with its reason, in the history too.
    await page.getByText(/^(draining|drained)$/).waitFor({ timeout: STEP_MS });
    await page.getByRole("listitem").filter({ hasText: "rack power work" }).waitFor({ timeout: STEP_MS });
    await expect(page.getByRole("definition").filter({ hasText: "rack power work" }).textContent()).resolves.toMatch(
      /^(draining|drained), deadline .*by operator:\S+: rack power work$/,
    );
    await screenshot(page, SUITE, "6-drained");
    await page.getByRole("button", { name: `Undrain ${NODE}` }).click();
    await page.getByRole("button", { name: `Drain ${NODE}` }).waitFor({ timeout: STEP_MS });
  });

  it("sets an operator label with a reason", async () => {
    const editor = page.getByRole("form", { name: `Labels of ${NODE}` });
    await editor.getByRole("textbox", { name: "Set labels", exact: true }).fill("zone=edge");
    await editor.getByRole("textbox", { name: `Reason for the labels of ${NODE}` }).fill("moved to the edge rack");
    await editor.getByRole("button", { name: "Apply labels" }).click();
    await page.getByRole("listitem").filter({ hasText: "moved to the edge rack" }).waitFor({ timeout: STEP_MS });
    await page.getByText("zone=edge", { exact: true }).first().waitFor({ timeout: STEP_MS });
    await expect(page.getByText("Set by operators: zone").isVisible()).resolves.toBe(true);
    await screenshot(page, SUITE, "7-labelled");
  });

  it("keeps an anonymous reader's node page current by polling, with no history and no action", async () => {
    // A context of its own: no sessionStorage, so no credentials.
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const reader = await context.newPage();
    const readerProblems = pageProblems(reader);
    await reader.goto(ui(`nodes/${NODE}`));
    await reader.getByText("Refreshed every 5 s: live updates need the read:history capability.").waitFor();
    await reader.getByText("The history (who did what and why) needs the read:history capability.").waitFor();
    await expect(reader.getByRole("button", { name: new RegExp(NODE) }).count()).resolves.toBe(0);
    await expect(reader.getByRole("button", { name: "Apply labels" }).count()).resolves.toBe(0);
    await expect(reader.getByText("cordoned", { exact: true }).count()).resolves.toBe(0);
    await operatorPut(NODE, { Action: "cordon", Message: "seen by polling" });
    await reader.getByText("cordoned", { exact: true }).waitFor({ timeout: STEP_MS });
    await screenshot(reader, SUITE, "8-anonymous-node");
    await context.close();
    expect(readerProblems).toEqual([]);
  });

  it("logged no error and broke no content security rule on the way", () => {
    expect(problems).toEqual([]);
  });
});
