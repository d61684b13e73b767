import { expect, it } from "vitest";
import { openLeaseBucket } from "../../src/cluster/open-lease-bucket.ts";
import { StartupError } from "../../src/errors/startup-error.ts";
import { natsPerSuite } from "../support/nats-per-suite.ts";

const nats = natsPerSuite();
const options = { ttlMs: 15_000, replicas: 1 };

it("is opened by every orchestrator with the partition count it was made for, and refused with another", async () => {
  const made = await openLeaseBucket(nats.nc, "LEASES_A", { ...options, partitions: 64 });
  await made.put("partitions.3", "orchestrator-1/a");
  const again = await openLeaseBucket(nats.nc, "LEASES_A", { ...options, partitions: 64 });
  expect((await again.get("partitions.3"))?.string()).toBe("orchestrator-1/a");

  const refusal = await openLeaseBucket(nats.nc, "LEASES_A", { ...options, partitions: 32 }).catch((e: unknown) => e);
  expect(refusal).toBeInstanceOf(StartupError);
  expect((refusal as Error).message).toMatch(
    /^Orchestrator\.Cluster\.Partitions is 32 here, but the cluster's lease bucket LEASES_A was made for 64: /,
  );
  expect((refusal as Error).message).toContain("Set Orchestrator.Cluster.Partitions=64");
  // Refused without a change: the bucket still says 64, and holds what it held.
  await openLeaseBucket(nats.nc, "LEASES_A", { ...options, partitions: 64 });
  expect((await again.get("partitions.3"))?.string()).toBe("orchestrator-1/a");
});

it("opens a bucket made before the count was kept, whatever the count", async () => {
  await nats.nc.jetstream().views.kv("LEASES_B", { ttl: 15_000, history: 1 });
  await expect(openLeaseBucket(nats.nc, "LEASES_B", { ...options, partitions: 16 })).resolves.toBeDefined();
});
