import { defineConfig } from "vitest/config";

/** The cluster scenarios (test/cluster/): one file at a time, after the main suite (`npm test` runs both). */
export default defineConfig({
  test: {
    include: ["test/cluster/**/*.test.ts"],
    globalSetup: ["test/support/build-once.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    maxWorkers: 1,
    reporters: ["default"],
  },
});
