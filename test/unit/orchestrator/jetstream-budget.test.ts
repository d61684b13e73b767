import { describe, expect, it } from "vitest";
import { defaultConfig } from "../../../src/config/keys.ts";
import { jetStreamBudget } from "../../../src/orchestrator/jetstream-budget.ts";

const MiB = 1024 * 1024;

describe("jetStreamBudget", () => {
  it("gives the account JetStreamMaxStore once outside cluster mode, whatever Replicas says", () => {
    const config = { ...defaultConfig(), "Orchestrator.NATS.JetStreamMaxStore": 64 * MiB };
    expect(jetStreamBudget({ ...config, "Orchestrator.Cluster.Replicas": 5 })).toEqual({
      replicas: 1,
      eventStreamBytes: 60397977,
      accountDiskBytes: 64 * MiB,
    });
  });

  it("gives the account JetStreamMaxStore on each of Replicas servers in cluster mode: every copy's reservation fits", () => {
    for (const replicas of [1, 3, 5]) {
      const budget = jetStreamBudget({
        ...defaultConfig(),
        "Orchestrator.NATS.JetStreamMaxStore": 64 * MiB,
        "Orchestrator.Cluster.Enabled": true,
        "Orchestrator.Cluster.Replicas": replicas,
      });
      expect(budget).toEqual({ replicas, eventStreamBytes: 60397977, accountDiskBytes: replicas * 64 * MiB });
      // What nats-server counts on the account (max_bytes once per copy), with a tenth of each copy's share to spare
      // for the lease bucket, which reserves nothing but stores on every copy.
      expect(budget.accountDiskBytes - budget.eventStreamBytes * replicas).toBeGreaterThanOrEqual(replicas * 6 * MiB);
    }
  });
});
