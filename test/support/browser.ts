import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";

/** Debian's chromium (scripts/setup installs it); CHROMIUM names another. playwright-core is pinned to its major. */
export const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";

/** Where browser tests put their screenshots (kept out of git). */
export const SCREENSHOTS = join(import.meta.dirname, "../../test-results/screenshots");

/**
 * Headless chromium as CI runs it: as root in a container, with a small /dev/shm, and nothing fetched but what the
 * page asks for. A missing browser fails the test, saying how to install it, rather than skipping it.
 */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`no chromium at ${CHROMIUM}: run scripts/setup (it installs Debian's chromium), or set CHROMIUM`);
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-dev-shm-usage"],
  });
}

/** Everything the page logged as an error or failed to load, CSP violations included: a clean page logs none. */
export function pageProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  return problems;
}

/** A full-page screenshot named after the step, in SCREENSHOTS/<suite>/. */
export async function screenshot(page: Page, suite: string, step: string): Promise<void> {
  const dir = join(SCREENSHOTS, suite);
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${step}.png`), fullPage: true });
}

/** Signs the console in with an API key from its header's *Sign in*, and waits until it says who is signed in. */
export async function signInWithKey(page: Page, key: string, timeout: number): Promise<void> {
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("textbox", { name: "API key" }).fill(key);
  await page.getByRole("main").getByRole("button", { name: "Sign in" }).click();
  await page.getByText(/^Signed in as/).waitFor({ timeout });
}

/**
 * A fresh browser context signed in with an API key as the console keeps it (the tab's sessionStorage), before any
 * script of a page runs: for a test or a benchmark whose subject is not the sign-in.
 */
export async function contextSignedIn(
  browser: Browser,
  key: string,
  viewport = { width: 1280, height: 800 },
): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport });
  const credentials = JSON.stringify({ kind: "key", key });
  // A string: this file is type-checked without the DOM's types.
  await context.addInitScript(`sessionStorage.setItem("shoal.credentials", ${JSON.stringify(credentials)})`);
  return context;
}
