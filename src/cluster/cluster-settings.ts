import type { ShoalConfig } from "../config/keys.ts";
import { StartupError } from "../errors/startup-error.ts";

/** JetStream elects a stream leader in seconds after a server dies; a shorter lease would flap through it. */
export const MIN_LEASE_TTL_MS = 15_000;

/** What several orchestrators sharing one store and one NATS cluster agree on. */
export interface ClusterSettings {
  readonly partitions: number;
  readonly leaseTtlMs: number;
  readonly replicas: number;
}

/**
 * The cluster settings when Orchestrator.Cluster.Enabled, else undefined. Refuses, with what to set, a store or a
 * NATS only one machine can hold: the SQLite file (its WAL needs one host's shared memory: sqlite.org/wal.html) and
 * the embedded nats-server (each orchestrator would start its own, and the nodes would be split between them).
 */
export function clusterSettings(config: ShoalConfig): ClusterSettings | undefined {
  if (!config["Orchestrator.Cluster.Enabled"]) return undefined;
  const problems: string[] = [];
  if (config["EventStore.URL"] === "")
    problems.push(
      "EventStore.URL is empty: the embedded SQLite store is one file on one host (sqlite.org/wal.html); " +
        "set it to the KurrentDB cluster every orchestrator shares (kurrentdb+discover://…)",
    );
  if (config["Orchestrator.NATS.URL"] === "")
    problems.push(
      "Orchestrator.NATS.URL is empty: each orchestrator would start its own nats-server; " +
        "set it to the NATS cluster (with JetStream) every orchestrator and compute node connects to",
    );
  const partitions = config["Orchestrator.Cluster.Partitions"];
  if (partitions < 1 || partitions > 4096)
    problems.push(`Orchestrator.Cluster.Partitions must be between 1 and 4096, got ${partitions}`);
  const leaseTtlMs = config["Orchestrator.Cluster.LeaseTTL"];
  if (leaseTtlMs < MIN_LEASE_TTL_MS)
    problems.push(
      `Orchestrator.Cluster.LeaseTTL must be at least 15s (a JetStream leader election takes seconds), got ${leaseTtlMs} ms`,
    );
  const replicas = config["Orchestrator.Cluster.Replicas"];
  if (replicas < 1 || replicas > 5)
    problems.push(`Orchestrator.Cluster.Replicas must be between 1 and 5 (JetStream's limit), got ${replicas}`);
  if (problems.length > 0)
    throw new StartupError(
      `cannot run as one of several orchestrators (Orchestrator.Cluster.Enabled):\n  ${problems.join("\n  ")}`,
    );
  return { partitions, leaseTtlMs, replicas };
}
