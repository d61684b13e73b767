import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CONFIG_KEYS } from "../../../src/config/keys.ts";

const page = readFileSync(join(import.meta.dirname, "../../../docs/bacalhau-users.md"), "utf8");

/** The keys a bullet of the page's Configuration section names (`- **Shared**: …`), as written there. */
function keysOf(bullet: string): string[] {
  const start = page.indexOf(`- **${bullet}**`);
  expect(start, bullet).toBeGreaterThan(-1);
  const end = page.indexOf("\n- ", start + 1);
  const text = page.slice(start, end === -1 ? undefined : end);
  // `.Memory` continues the key before it; the rest are whole keys or patterns (`Compute.Heartbeat.*`).
  return [...text.matchAll(/`([A-Z][A-Za-z.*<>]+)`/g)].map((m) => m[1]!);
}

/** A key as the page writes it, `*` and `<Type>` standing for any part. */
function matches(written: string): string[] {
  const pattern = new RegExp(
    `^${written.replaceAll(".", "\\.").replaceAll("*", "[A-Za-z.]+").replaceAll("<Type>", "[A-Za-z]+")}$`,
  );
  return Object.keys(CONFIG_KEYS).filter((key) => pattern.test(key));
}

describe("docs/bacalhau-users.md, Configuration", () => {
  it("names only keys Shoal has, as shared with Bacalhau and as Shoal's own", () => {
    const named = [...keysOf("Shared"), ...keysOf("Shoal's own")];
    expect(named.length).toBeGreaterThan(30);
    expect(named.filter((key) => matches(key).length === 0)).toEqual([]);
  });

  it("names as Bacalhau's alone keys Shoal does not have", () => {
    const named = keysOf("Bacalhau's keys Shoal does not have");
    expect(named.length).toBeGreaterThan(5);
    expect(named.filter((key) => matches(key).length > 0)).toEqual([]);
  });
});
