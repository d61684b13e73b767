import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { clusterSettings } from "../../cluster/cluster-settings.ts";
import { LeaseTable } from "../../cluster/lease-table.ts";
import { openLeaseBucket } from "../../cluster/open-lease-bucket.ts";
import { OwnerCommands } from "../../cluster/owner-commands.ts";
import { Ownership } from "../../cluster/ownership.ts";
import { Presence } from "../../cluster/presence.ts";
import { StartupError } from "../../errors/startup-error.ts";
import { JS_CODES, jetStreamApiError } from "../../transport/jetstream-api-error.ts";
import { untilJetStreamAnswers } from "../../transport/until-jetstream-answers.ts";
import { Later, type Module } from "../module.ts";
import type { OrchestratorContext } from "../orchestrator-context.ts";

/** The key-value bucket that holds the partitions' and duties' leases. */
export const LEASE_BUCKET = "SHOAL_LEASES";
/** Where the orchestrators of a cluster say they are alive (it sizes each one's share of the partitions). */
export const MEMBERS_SUBJECT = "shoal.cluster.members";
/** How often leases are renewed and free ones looked for: a dead owner's partitions go within a tick of expiry. */
const TICK_MS = 1_000;
/** How long a write forwarded to its owner may take before the caller is told Unavailable. */
const FORWARD_TIMEOUT_MS = 10_000;

export interface ClusterModule extends Module {
  /** Writes carried out by their entity's owner: here, or forwarded over NATS to the orchestrator that holds it. */
  readonly commands: OwnerCommands;
}

/**
 * Several orchestrators (Orchestrator.Cluster.Enabled): this one's leases on partitions and duties, taken from the
 * key-value bucket once the read models are recovered and before the processors start, handed back on stop after the
 * processors stopped (so a duty's processor saves its checkpoint while it still holds the duty). Nothing for a sole
 * orchestrator.
 */
export function clusterModule(context: OrchestratorContext): ClusterModule {
  const { config, cluster, logger, clock, deadlines, stops } = context;
  const ownership = new Later<Ownership>("the cluster's leases", "recover");
  // Built now: it hears of every partition taken from the first lease on.
  const commands = new OwnerCommands({
    role: cluster,
    nc: context.nats.nc,
    self: context.nodeId,
    logger: logger.child({ component: "cluster" }),
    timeoutMs: FORWARD_TIMEOUT_MS,
  });
  return {
    name: "cluster",
    commands,

    async recover() {
      const settings = clusterSettings(config);
      if (settings === undefined) return;
      const { nc } = context.nats;
      const ttlMs = settings.leaseTtlMs;
      const log = logger.child({ component: "cluster" });
      // Opened (or made) again while the NATS cluster is electing the bucket's leader: a restart must not abort on it.
      const kv = await untilJetStreamAnswers(
        `opening the lease bucket ${LEASE_BUCKET}`,
        () =>
          openLeaseBucket(nc, LEASE_BUCKET, {
            ttlMs,
            replicas: settings.replicas,
            partitions: settings.partitions,
          }),
        { clock, deadlines, logger: log },
      ).catch((err: unknown) => {
        const apiError = jetStreamApiError(err);
        if (apiError?.err_code !== JS_CODES.NO_PEERS) throw err;
        throw new StartupError(
          `NATS cannot place the ${settings.replicas} copies of the lease bucket ${LEASE_BUCKET}, each on its own ` +
            `server (${apiError.description ?? "no suitable peers"}): set Orchestrator.Cluster.Replicas to at most ` +
            "the NATS cluster's JetStream servers, and start the first orchestrator with all of them up",
        );
      });
      // Unique per start: a restarted orchestrator never takes its former self's lease for its own.
      const owner = `${context.nodeId}/${randomUUID()}`;
      const elapsed = () => performance.now();
      const leases = ownership.set(
        new Ownership({
          table: new LeaseTable({ kv, owner, ttlMs, safetyMs: Math.floor(ttlMs / 5), elapsed }),
          presence: new Presence({
            nc,
            subject: MEMBERS_SUBJECT,
            owner,
            forgetAfterMs: ttlMs,
            elapsed,
            heard: cluster.memberHeard,
          }),
          partitions: settings.partitions,
          duties: cluster.duties,
          tickMs: TICK_MS,
          clock,
          deadlines,
          listener: cluster,
          log,
        }),
      );
      cluster.attach(leases);
      context.metrics.registerCollector("cluster", () => cluster.figures());
      stops.add({ name: "handing back the cluster's leases", run: () => leases.stop(), timeoutMs: 5_000 });
      log.info(
        { owner, partitions: settings.partitions, leaseTtlMs: ttlMs, duties: cluster.duties },
        "joining the cluster",
      );
    },

    follow() {
      if (cluster.clustered) ownership.get().start();
    },
  };
}
