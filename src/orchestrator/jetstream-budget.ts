import type { ShoalConfig } from "../config/keys.ts";

/**
 * What Shoal's JetStream takes, from Orchestrator.NATS.JetStreamMaxStore, the disk each server holding a copy spends:
 * SHOAL_EVENTS keeps the newest events within 90% of it, and the rest is for the lease bucket (SHOAL_LEASES, a few
 * bytes per partition and duty, unbounded in size so it reserves nothing) and headroom.
 */
export interface JetStreamBudget {
  /** Copies of each stream Shoal makes: Orchestrator.Cluster.Replicas in cluster mode, else one. */
  readonly replicas: number;
  /** SHOAL_EVENTS's max_bytes: what one copy of it reserves on its server. */
  readonly eventStreamBytes: number;
  /**
   * The Shoal account's JetStream disk limit in operator mode. nats-server counts a stream's max_bytes on the account
   * once per replica, and what every copy stores, so the account gets JetStreamMaxStore on each of `replicas` servers.
   */
  readonly accountDiskBytes: number;
}

export function jetStreamBudget(config: ShoalConfig): JetStreamBudget {
  const maxStore = config["Orchestrator.NATS.JetStreamMaxStore"];
  const replicas = config["Orchestrator.Cluster.Enabled"] ? config["Orchestrator.Cluster.Replicas"] : 1;
  return { replicas, eventStreamBytes: Math.floor(maxStore * 0.9), accountDiskBytes: maxStore * replicas };
}
