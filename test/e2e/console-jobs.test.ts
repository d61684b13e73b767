import { readFileSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, pageProblems, screenshot, signInWithKey } from "../support/browser.ts";
import { startComputeProcess, untilApproved } from "../support/compute-processes.ts";
import { dockerTestImage } from "../support/docker-test-image.ts";
import { tempDir } from "../support/fixtures.ts";
import { JobApiClient } from "../support/job-api-client.ts";
import { LocalServe } from "../support/local-serve.ts";
import { removeContainersOf } from "../support/node-containers.ts";
import type { ShoalProcess } from "../support/shoal-process.ts";

const SUITE = "console-jobs";
const NODE = "console-jobs-n-1";
/** Joins during the daemon's test: its execution appears on the job's page as it is created. */
const LATE_NODE = "console-jobs-n-2";
/** Long enough for a loaded two-core machine (a job's container starts in it); a step that never happens fails. */
const STEP_MS = 30_000;

/** A batch job in YAML, as a user writes it: one docker task running `sh -c command` in the test image. */
const yamlJob = (image: string, name: string, command: string, cpu = "250m", queueTimeout = 0) => `Name: ${name}
Type: batch
Count: 1
Tasks:
  - Name: main
    Engine:
      Type: docker
      Params:
        Image: ${image}
        Entrypoint: [sh, -c]
        Parameters: [${JSON.stringify(command)}]
    Resources:
      CPU: ${cpu}
      Memory: 32Mb
    Timeouts:
      QueueTimeout: ${queueTimeout}
`;

/**
 * The console's jobs in Debian's chromium, against a real `shoal serve` and a real `shoal compute` running the jobs
 * in Docker: a job submitted from YAML runs to completion with its output followed as it is written; a bad spec
 * shows each field's problem at its line in the text and stores nothing; a long job is stopped with a reason its
 * history shows.
 */
describe("the web console's jobs in a browser", { timeout: 240_000 }, () => {
  const serve = new LocalServe(tempDir("shoal-e2e-console-jobs-"));
  const api = new JobApiClient(serve.url, serve.adminKey);
  const jobCount = async () => ((await api.call("GET", "/api/v1/orchestrator/jobs")).body.Items as unknown[]).length;
  let image = "";
  let compute: ShoalProcess | undefined;
  let lateCompute: ShoalProcess | undefined;
  let browser: Browser;
  let page: Page;
  let problems: string[];
  const ui = (path = "") => `${serve.url()}/ui/${path}`;
  /**
   * Before any node joined (serve's own included), and once the compute node was approved: whole seconds, as a
   * datetime-local input takes them (the page's time zone is UTC).
   */
  let beforeNode = "";
  let nodeApproved = "";
  // The input drops zero seconds from its value ("12:58:00" reads "12:58"), and Playwright's fill refuses a value
  // the input does not keep as given: write a whole minute as the input does.
  const localSecond = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace(/:00$/, "");

  /** A real `shoal compute` joining serve with the join token, its containers stopped within a second. */
  const startNode = (nodeId: string) =>
    startComputeProcess({
      nodeId,
      dataDir: tempDir(`shoal-e2e-${nodeId}-`),
      orchestrators: serve.natsUrl,
      token: readFileSync(serve.joinTokenFile, "utf8").trim(),
      settings: ["Compute.Docker.StopGracePeriod=1s"],
    });

  /** Fills the submit page's text area and submits it. */
  const submit = async (spec: string) => {
    await page.goto(ui("jobs/new"));
    await page.getByRole("textbox", { name: /^Job spec/ }).fill(spec);
    await page.getByRole("button", { name: "Submit" }).click();
  };

  beforeAll(async () => {
    beforeNode = localSecond(Date.now() - 1000);
    [image, browser] = await Promise.all([dockerTestImage(), launchChromium(), serve.start()]);
    compute = startNode(NODE);
    await untilApproved(api, NODE, compute, STEP_MS);
    nodeApproved = localSecond(Date.now() + 1000);
    page = await browser.newPage({ viewport: { width: 1280, height: 900 }, timezoneId: "UTC" });
    problems = pageProblems(page);
    await page.goto(ui("jobs"));
    await signInWithKey(page, serve.adminKey(), STEP_MS);
  });

  afterAll(async () => {
    await browser?.close();
    for (const c of [compute, lateCompute]) if (c?.child.exitCode === null) await c.kill("SIGTERM");
    if (serve.running) await serve.kill("SIGTERM");
    await Promise.all([removeContainersOf(NODE), removeContainersOf(LATE_NODE)]);
  });

  it("submits a job from YAML, follows its output as it is written, and sees it complete", async () => {
    await page.goto(ui("jobs"));
    await page.getByRole("link", { name: "Submit a job" }).click();
    await page.waitForURL(ui("jobs/new"));
    await page
      .getByRole("textbox", { name: /^Job spec/ })
      .fill(yamlJob(image, "console-hello", "echo first line; sleep 1; echo oops >&2; sleep 3; echo second line"));
    await screenshot(page, SUITE, "1-submit");
    await page.getByRole("button", { name: "Submit" }).click();
    await page.waitForURL(/\/ui\/jobs\/j-/, { timeout: STEP_MS });
    const output = page.getByRole("region", { name: "Logs" }).getByLabel("Output");
    // Followed from the start (looked for first: on a loaded machine the 4-second job may end soon after its first
    // line), and the first line arrives while the job still runs: followed, not read at the end.
    await page.getByText("Following the output as it is written…").waitFor({ timeout: STEP_MS });
    await output.getByText("first line").waitFor({ timeout: STEP_MS });
    await expect(page.getByText("completed", { exact: true }).count()).resolves.toBe(0);
    await screenshot(page, SUITE, "2-following");
    await page.getByText("completed", { exact: true }).waitFor({ timeout: STEP_MS });
    await page.getByText("End of the output.").waitFor({ timeout: STEP_MS });
    await expect(output.textContent()).resolves.toBe("first line\noops\nsecond line\n");
    await expect(output.locator(".stderr").allTextContents()).resolves.toEqual(["oops\n"]);
    await expect(page.getByRole("region", { name: "Executions" }).getByText(NODE).count()).resolves.toBe(1);
    await page.getByRole("listitem").filter({ hasText: "Job submitted" }).waitFor();
    await screenshot(page, SUITE, "3-completed");

    await page.getByRole("link", { name: "Jobs", exact: true }).first().click();
    const row = page.getByRole("row").filter({ hasText: "console-hello" });
    await row.getByText("completed", { exact: true }).waitFor({ timeout: STEP_MS });
  });

  it("shows each problem of a bad spec at its field, and stores nothing", async () => {
    const before = await jobCount();
    await submit(yamlJob(image, "console-bad", "echo never", "lots").replace("Type: batch", "Type: sometimes"));
    const list = page.getByRole("list", { name: "Problems" });
    await list.waitFor({ timeout: STEP_MS });
    // Each problem beside the line of its field in the text.
    await expect(list.getByRole("listitem").allTextContents()).resolves.toEqual([
      expect.stringMatching(/^Type: .* line 2$/),
      expect.stringMatching(/^Tasks\[0\]\.Resources\.CPU: invalid CPU value: "lots".* line 13$/),
    ]);
    await list.getByRole("button", { name: "line 13" }).click();
    // The caret moved there, the line selected (the root tsconfig has no DOM types: the page's code as text).
    const caret = "(({ activeElement: a }) => [a.id, a.value.slice(a.selectionStart, a.selectionEnd)])(document)";
    await expect(page.evaluate(caret)).resolves.toEqual(["job-spec", "      CPU: lots"]);
    await expect(page.getByRole("alert").textContent()).resolves.toBe("The job was refused; nothing was stored:");
    expect(page.url()).toBe(ui("jobs/new"));
    await screenshot(page, SUITE, "4-bad-spec");
    expect(await jobCount()).toBe(before);
    // The browser logs the refused request itself; that one is expected.
    expect(problems.splice(0)).toEqual([
      "console: Failed to load resource: the server responded with a status of 400 (Bad Request)",
    ]);
  });

  it("says a list the API refused is not current, rather than live", async () => {
    await page.goto(ui("jobs?order_by=bogus"));
    await page.getByRole("alert").filter({ hasText: "order_by" }).waitFor({ timeout: STEP_MS });
    await expect(page.getByRole("status").first().textContent()).resolves.toBe("Not current: the last read failed.");
    expect(problems.splice(0)).toEqual([
      "console: Failed to load resource: the server responded with a status of 400 (Bad Request)",
    ]);
  });

  it("takes a job under a Job key in any case, as `shoal job run` does, its problems placed under the key", async () => {
    const before = await jobCount();
    const wrap = (key: string, spec: string) => `${key}:\n${spec.replace(/^/gm, "  ").trimEnd()}\n`;
    await submit(wrap("job", yamlJob(image, "console-wrapped-bad", "echo never", "lots")));
    const list = page.getByRole("list", { name: "Problems" });
    await list.waitFor({ timeout: STEP_MS });
    await expect(list.getByRole("listitem").allTextContents()).resolves.toEqual([
      expect.stringMatching(/^Tasks\[0\]\.Resources\.CPU: invalid CPU value: "lots".* line 14$/),
    ]);
    expect(await jobCount()).toBe(before);
    expect(problems.splice(0)).toEqual([
      "console: Failed to load resource: the server responded with a status of 400 (Bad Request)",
    ]);
    await submit(wrap("Job", yamlJob(image, "console-wrapped", "echo wrapped")));
    await page.waitForURL(/\/ui\/jobs\/j-/, { timeout: STEP_MS });
    await page.getByRole("heading", { name: /console-wrapped/ }).waitFor({ timeout: STEP_MS });
    expect(await jobCount()).toBe(before + 1);
  });

  it("stops a long job with a reason, which its history shows with who gave it", async () => {
    await submit(yamlJob(image, "console-long", "echo started; sleep 600"));
    await page.waitForURL(/\/ui\/jobs\/j-/, { timeout: STEP_MS });
    await page.getByRole("region", { name: "Logs" }).getByText("started").waitFor({ timeout: STEP_MS });
    await page.getByRole("textbox", { name: /^Reason for stopping/ }).fill("wrong input batch");
    await page.getByRole("button", { name: "Stop job" }).click();
    await page.getByText("stopped", { exact: true }).waitFor({ timeout: STEP_MS });
    const stop = page.getByRole("listitem").filter({ hasText: "wrong input batch" }).first();
    await stop.waitFor({ timeout: STEP_MS });
    await expect(stop.textContent()).resolves.toMatch(/by operator:\S+/);
    await expect(page.getByRole("button", { name: "Stop job" }).count()).resolves.toBe(0);
    await page.getByText("End of the output.").waitFor({ timeout: STEP_MS });
    await screenshot(page, SUITE, "5-stopped");
  });

  it("says why a job is queued, node by node", async () => {
    // More CPU than the only node has, and a queue timeout, so that it waits (and the page says why).
    await submit(yamlJob(image, "console-too-big", "echo never", "4", 600));
    await page.waitForURL(/\/ui\/jobs\/j-/, { timeout: STEP_MS });
    const why = page.getByRole("region", { name: "Why it is queued" });
    await why.waitFor({ timeout: STEP_MS });
    await expect(why.getByRole("paragraph").textContent()).resolves.toMatch(
      /^Job queued\. not enough nodes to run job/,
    );
    await expect(why.getByRole("listitem").allTextContents()).resolves.toEqual([
      expect.stringMatching(new RegExp(`^Node ${NODE}: .*CPU`)),
    ]);
    await screenshot(page, SUITE, "6-queued");
    await page.getByRole("textbox", { name: /^Reason for stopping/ }).fill("too big for this cluster");
    await page.getByRole("button", { name: "Stop job" }).click();
    await page.getByText("stopped", { exact: true }).waitFor({ timeout: STEP_MS });
  });

  it("reads the audit feed, the nodes as of a moment before the node joined and after, and the changes between", async () => {
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Audit" }).click();
    const feed = page.getByRole("form", { name: "Filter events" });
    await feed.getByRole("textbox", { name: "Event type" }).fill("JobStopped");
    await feed.getByRole("button", { name: "Apply" }).click();
    const events = page.getByRole("table", { name: "Events" });
    // The two stops, the first with its reason; the unfiltered page it replaces held them too.
    await expect
      .poll(() => events.getByRole("rowheader").allTextContents(), { timeout: STEP_MS })
      .toEqual(["JobStopped", "JobStopped"]);
    await events.getByRole("row").filter({ hasText: "wrong input batch" }).waitFor();
    await screenshot(page, SUITE, "7-audit-feed");

    const asOf = page.getByRole("form", { name: "Nodes as of" });
    // A datetime-local input takes its value typed; Playwright's fill sets it whole.
    await asOf.getByLabel("As of").fill(beforeNode);
    await asOf.getByRole("button", { name: "Show the nodes" }).click();
    await page.getByText("No node then.").waitFor({ timeout: STEP_MS });
    await asOf.getByLabel("As of").fill(nodeApproved);
    await asOf.getByRole("button", { name: "Show the nodes" }).click();
    const then = page
      .getByRole("table", { name: /^Nodes as of/ })
      .getByRole("row")
      .filter({ hasText: NODE });
    await then.getByText("approved", { exact: true }).waitFor({ timeout: STEP_MS });

    const diff = page.getByRole("form", { name: "Changes between" });
    await diff.getByLabel("From").fill(beforeNode);
    await diff.getByLabel("To").fill(nodeApproved);
    await diff.getByRole("button", { name: "Show the changes" }).click();
    const nodes = page.getByRole("table", { name: "Nodes", exact: true });
    await nodes.waitFor({ timeout: STEP_MS });
    await expect(nodes.getByRole("row").filter({ hasText: NODE }).allTextContents()).resolves.toEqual([
      // Without manual approval a node is approved as it joins: one change.
      expect.stringMatching(/joined .*APPROVED.*joined with the join token$/),
    ]);
    await screenshot(page, SUITE, "8-audit-as-of-and-diff");
  });

  it("follows a daemon job's executions, one created on a node that joins after the page was read", async () => {
    await submit(yamlJob(image, "console-daemon", "echo up; sleep 600", "100m").replace("Type: batch", "Type: daemon"));
    await page.waitForURL(/\/ui\/jobs\/j-/, { timeout: STEP_MS });
    const executions = page.getByRole("region", { name: "Executions" });
    await executions.getByRole("link", { name: NODE }).waitFor({ timeout: STEP_MS });
    // No job event tells of it: only the new execution's own stream, which no entity filter could have named.
    lateCompute = startNode(LATE_NODE);
    await executions.getByRole("link", { name: LATE_NODE }).waitFor({ timeout: STEP_MS });
    await screenshot(page, SUITE, "9-daemon-followed");
    await page.getByRole("textbox", { name: /^Reason for stopping/ }).fill("daemon test done");
    await page.getByRole("button", { name: "Stop job" }).click();
    await page.getByText("stopped", { exact: true }).waitFor({ timeout: STEP_MS });
  });

  it("logged no error and broke no content security rule on the way", () => {
    expect(problems).toEqual([]);
  });
});
