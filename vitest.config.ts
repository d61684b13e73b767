import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Several orchestrators as processes on a three-server NATS cluster: run on their own, after the rest
    // (vitest.cluster.config.ts), so that the machine's other tests do not stretch their leases and timeouts.
    exclude: [...configDefaults.exclude, "test/cluster/**"],
    // bin/shoal runs the compiled CLI: build it first when the sources changed.
    globalSetup: ["test/support/build-once.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Integration and e2e suites start real nats-server and shoal processes; two cores.
    maxWorkers: 2,
    reporters: ["default"],
  },
});
