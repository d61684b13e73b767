import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../../..");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/**
 * Shoal's code as one text, with literals split over lines (`"…" +\n "…"`) joined again, so that a message reads
 * as it is printed.
 */
const shoalText = ["src", "machines"]
  .flatMap((dir) => sourceFiles(join(ROOT, dir)))
  .map((file) => readFileSync(file, "utf8").replace(/["'`]\s*\+\s*["'`]/g, ""))
  .join("\n");

/**
 * The messages the page quotes: each a quote of its own holding one code span, `> \`message\``, which may go on
 * over several `> ` lines (Markdown shows the line breaks in a code span as spaces).
 */
function quotedMessages(page: string): string[] {
  const messages: string[] = [];
  let open: string[] | undefined;
  // Indented: a quote inside a list item.
  for (const line of page.split("\n").map((l) => l.trimStart())) {
    if (open === undefined && line.startsWith("> `")) open = [];
    if (open === undefined) continue;
    if (!line.startsWith("> ")) throw new Error(`a quoted message is not closed: ${open.join(" ")}`);
    open.push(line.slice(2));
    if (line.endsWith("`") && open.join(" ").length > 2) {
      messages.push(open.join(" ").slice(1, -1));
      open = undefined;
    }
  }
  return messages;
}

/**
 * The parts of a quoted message that Shoal's code does not hold. `…` stands for what varies; the punctuation beside
 * it may come from the code that fills it in, so it is left out.
 */
function missingParts(message: string): string[] {
  return message
    .split("…")
    .map((part) => part.replace(/^[\s:;,.()[\]]+|[\s:;,.()[\]]+$/g, ""))
    .filter((part) => part.length >= 4 && !shoalText.includes(part));
}

describe("docs/troubleshooting.md", () => {
  const page = readFileSync(join(ROOT, "docs/troubleshooting.md"), "utf8");
  const messages = quotedMessages(page);

  it("quotes the messages it explains", () => {
    expect(messages.length).toBe(page.split("\n").filter((line) => line.trimStart().startsWith("> `")).length);
    expect(messages.length).toBeGreaterThan(50);
    expect(messages.every((message) => !message.includes("`"))).toBe(true);
  });

  it("quotes only messages Shoal's code prints", () => {
    const missing = messages.flatMap((message) => missingParts(message).map((part) => `${part}    (in: ${message})`));
    expect(missing).toEqual([]);
  });

  it("would notice a message that is not in the code", () => {
    expect(missingParts("… the flux capacitor is not charged …")).toEqual(["the flux capacitor is not charged"]);
  });
});
