import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = resolve(import.meta.dirname, "../../../src");
const SCHEDULER = join(SRC, "scheduler");
/** The hosts and read side that use placement: placement must not lean back on them (ARCHITECTURE.md). */
const HOSTS = ["workflows", "projections", "actors", "api", "orchestrator", "transport", "compute", "cli"];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

/** Every relative module a file imports or re-exports, resolved to a path under src/. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const specifiers = [...text.matchAll(/(?:\bfrom\s+|\bimport\s*\(?\s*)"(\.[^"]+)"/g)].map((m) => m[1] as string);
  return specifiers.map((s) => relative(SRC, resolve(dirname(file), s)));
}

describe("the scheduler's dependencies", () => {
  it("are machines, the event catalog, labels and itself: no workflow host, read model or transport", () => {
    const files = sources(SCHEDULER);
    expect(files.length).toBeGreaterThan(10);
    const leaning = files.flatMap((file) =>
      importsOf(file)
        .filter((target) => HOSTS.some((host) => target.startsWith(`${host}/`)))
        .map((target) => `${relative(SRC, file)} -> ${target}`),
    );
    expect(leaning).toEqual([]);
  });
});
