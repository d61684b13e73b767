import type { KV, NatsConnection } from "nats";
import { StartupError } from "../errors/startup-error.ts";

export interface LeaseBucketOptions {
  readonly ttlMs: number;
  readonly replicas: number;
  readonly partitions: number;
}

/** Where the bucket's stream keeps the partition count it was made for: the key's text must stay as it is. */
const PARTITIONS_MARK = /Orchestrator\.Cluster\.Partitions=(\d+)/;

/**
 * Opens (or makes) the lease bucket, refusing a partition count other than the one the bucket was made for. Entities
 * are split by a hash modulo the count, so orchestrators that disagree on it each think they own entities the others
 * own too, and both act on them. The count is kept in the stream's description, written once by whoever makes the
 * bucket (a key would expire with the bucket's TTL). A bucket made before the count was kept has none, and is not
 * checked.
 */
export async function openLeaseBucket(nc: NatsConnection, name: string, options: LeaseBucketOptions): Promise<KV> {
  const { ttlMs, replicas, partitions } = options;
  const kv = await nc.jetstream().views.kv(name, {
    ttl: ttlMs,
    history: 1,
    replicas,
    description: `Shoal's partition and duty leases; Orchestrator.Cluster.Partitions=${partitions}`,
  });
  const made = PARTITIONS_MARK.exec((await kv.status()).streamInfo.config.description ?? "")?.[1];
  if (made !== undefined && Number(made) !== partitions) {
    throw new StartupError(
      `Orchestrator.Cluster.Partitions is ${partitions} here, but the cluster's lease bucket ${name} was made for ` +
        `${made}: every orchestrator of a cluster must split entities the same way. Set ` +
        `Orchestrator.Cluster.Partitions=${made}, or, to change the count, stop every orchestrator, delete the ` +
        `bucket (nats kv del ${name}) and start them all with the new count`,
    );
  }
  return kv;
}
