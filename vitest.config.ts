import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // bin/shoal runs the compiled CLI: build it first when the sources changed.
    globalSetup: ["test/support/build-once.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Integration and e2e suites start real nats-server and shoal processes; two cores.
    maxWorkers: 2,
    reporters: ["default"],
  },
});
