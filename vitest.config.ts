import { configDefaults, defineConfig } from "vitest/config";

const UNIT = "test/unit/**/*.test.ts";
const shared = {
  // bin/shoal runs the compiled CLI: build it first when the sources changed.
  globalSetup: ["test/support/build-once.ts"],
  testTimeout: 30_000,
  hookTimeout: 60_000,
};

export default defineConfig({
  test: {
    // Integration and e2e suites start real nats-server and shoal processes; two cores.
    maxWorkers: 2,
    reporters: ["default"],
    // Vitest runs the projects' files in the order of their names: these first, longest first (or, when it has
    // no timings of an earlier run, largest first).
    projects: [
      {
        test: {
          ...shared,
          name: "processes",
          include: ["test/**/*.test.ts"],
          // Several orchestrators as processes on a three-server NATS cluster: run on their own, after the rest
          // (vitest.cluster.config.ts), so that the machine's other tests do not stretch their leases and timeouts.
          exclude: [...configDefaults.exclude, "test/cluster/**", UNIT],
        },
      },
      // Pure code, no process-wide state between files: one module graph per worker instead of one per file
      // halves their time (most of it was importing). Many short files last, so that both workers end together.
      { test: { ...shared, name: "unit", include: [UNIT], isolate: false } },
    ],
  },
});
