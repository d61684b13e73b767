import { describe, expect, it } from "vitest";
import { printable, printableCell } from "../../../src/cli/printable.ts";
import { formatTable } from "../../../src/cli/table.ts";

// eslint-disable-next-line no-control-regex -- looking for raw control characters is the point
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/;

describe("printable", () => {
  it("shows terminal escape sequences as text instead of sending them", () => {
    expect(printable("\u001b[31mred\u001b[0m")).toBe("\\u001b[31mred\\u001b[0m");
    expect(printable("\u001b]0;title\u0007")).toBe("\\u001b]0;title\\u0007");
    expect(printable("\u009b2J")).toBe("\\u009b2J");
    expect(printable("ok\rfake")).toBe("ok\\u000dfake");
    expect(printable("\u007f")).toBe("\\u007f");
  });

  it("shows bidirectional controls that would reorder what is read", () => {
    expect(printable("abc\u202edcb")).toBe("abc\\u202edcb");
    expect(printable("\u2066x\u2069\u200f")).toBe("\\u2066x\\u2069\\u200f");
  });

  it("keeps newlines and tabs only in multi-line output", () => {
    expect(printable("a\nb\tc")).toBe("a\\u000ab\\u0009c");
    expect(printable("a\nb\tc\u001b", { multiline: true })).toBe("a\nb\tc\\u001b");
  });

  it("leaves ordinary text alone, Unicode included, and is idempotent", () => {
    const text = "node-1 zone=eu-west Ünïcødé ✓ 日本 👩‍💻";
    expect(printable(text)).toBe(text);
    const once = printable("\u001b\u0085\u202e\n");
    expect(printable(once)).toBe(once);
    expect(once).not.toMatch(RAW);
  });

  it("keeps JSON output valid JSON with the original value", () => {
    const value = { reason: "a\u009bb\u202ec\u001bd" };
    const out = printable(JSON.stringify(value, null, 2), { multiline: true });
    expect(out).not.toMatch(RAW);
    expect(JSON.parse(out)).toEqual(value);
  });
});

describe("printableCell", () => {
  it("joins a multi-line text's lines with '; ', blank ones and CRs left out, and escapes the rest", () => {
    expect(printableCell("pull failed\n  manifest unknown\r\n\n")).toBe("pull failed; manifest unknown");
    expect(printableCell("a\nb\tc\u001b[2J")).toBe("a; b\\u0009c\\u001b[2J");
    expect(printableCell("one line\u0007")).toBe("one line\\u0007");
    expect(printableCell("\n")).toBe("");
  });
});

describe("formatTable", () => {
  it("prints cells from the API on one line each, with nothing raw, aligned by what is shown", () => {
    const table = formatTable(
      ["ID", "REASON"],
      [
        ["node-1", "line1\nline2\u001b[2J"],
        ["node-22", "ok"],
      ],
    );
    expect(table).not.toMatch(RAW);
    expect(table.split("\n")).toEqual(["ID       REASON", "node-1   line1; line2\\u001b[2J", "node-22  ok"]);
  });
});
