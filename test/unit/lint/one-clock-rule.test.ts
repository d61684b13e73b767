import { fileURLToPath } from "node:url";
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

/** The lint rule that keeps every wait of the orchestrator on the deadline heap, run as `npm run lint` runs it. */
const root = fileURLToPath(new URL("../../..", import.meta.url));
const eslint = new ESLint({ cwd: root });
const ONE_CLOCK_RULES = new Set([
  "no-restricted-globals",
  "no-restricted-properties",
  "@typescript-eslint/no-restricted-imports",
  "no-restricted-syntax",
]);

/** The one-clock rules `code` breaks at `path` (in the repository), one entry per finding. */
async function broken(path: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: `${root}/${path}` });
  return (result?.messages ?? []).flatMap((m) => (m.ruleId && ONE_CLOCK_RULES.has(m.ruleId) ? [m.ruleId] : []));
}

const TIMERS = [
  'import { setTimeout as sleep } from "node:timers/promises";',
  'import { setInterval as tick } from "node:timers";',
  "export const a = setTimeout(() => undefined, 10);",
  "export const b = setInterval(() => undefined, 10);",
  "export const c = globalThis.setTimeout(() => undefined, 10);",
  "export const d = AbortSignal.timeout(10);",
  "export const e = (clock: { setTimer(ms: number, fn: () => void): void }) => clock.setTimer(10, () => undefined);",
  "export const f = [sleep, tick];",
].join("\n");

describe("the one-clock lint rule", () => {
  it("refuses a timer of its own anywhere in the orchestrator's code", async () => {
    for (const path of ["src/api/jobs/waits.ts", "src/projections/waits.ts", "src/actors/waits.ts"])
      expect(await broken(path, TIMERS), path).toEqual([
        "@typescript-eslint/no-restricted-imports",
        "@typescript-eslint/no-restricted-imports",
        "no-restricted-globals",
        "no-restricted-globals",
        "no-restricted-properties",
        "no-restricted-properties",
        "no-restricted-syntax",
      ]);
  });

  it("leaves yielding to the event loop alone", async () => {
    const yielding = 'import { setImmediate } from "node:timers/promises";\nexport const y = setImmediate;';
    expect(await broken("src/projections/waits.ts", yielding)).toEqual([]);
  });

  it("allows timers where real time is the point: the clock, the transport, the CLI, a node, the simulator, the SQLite poll, shutdown bounds", async () => {
    for (const path of [
      "src/actors/clock.ts",
      "src/actors/deadline-scheduler.ts",
      "src/transport/waits.ts",
      "src/cli/waits.ts",
      "src/compute/waits.ts",
      "src/sim/waits.ts",
      "src/events/sqlite/waits.ts",
      "src/lifecycle/waits.ts",
    ])
      expect(await broken(path, TIMERS), path).toEqual([]);
  });
});
