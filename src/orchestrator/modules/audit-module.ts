import { auditLogOf } from "../../events/chain/audit-log.ts";
import { AuditCheckpointer } from "../../projections/audit/audit-checkpointer.ts";
import { loadOrCreateAuditKey } from "../../security/audit-signing-key.ts";
import { AUDIT_CHECKPOINTS_SUBJECT } from "../../transport/subjects.ts";
import { Later, type Module } from "../module.ts";
import type { OrchestratorContext } from "../orchestrator-context.ts";
import type { NodeModule } from "./node-module.ts";

/**
 * Signed checkpoints of the event log's hash chain (docs/audit.md): stored beside the log and
 * published on shoal.audit.checkpoints. A store with no chain (EventStoreDB) has none.
 */
export function auditModule(context: OrchestratorContext, deps: { readonly nodes: NodeModule }): Module {
  const { config, store, logger, processors, deadlines, stops, clock } = context;
  const checkpointer = new Later<AuditCheckpointer | undefined>("the audit checkpointer", "follow");
  return {
    name: "audit",

    follow() {
      const log = auditLogOf(store);
      const every = config["Orchestrator.Audit.CheckpointEvery"];
      const intervalMs = config["Orchestrator.Audit.CheckpointInterval"];
      if (log === undefined || (every === 0 && intervalMs === 0)) {
        checkpointer.set(undefined);
        return;
      }
      const { key, created, path } = loadOrCreateAuditKey(config.DataDir);
      const audit = logger.child({ component: "audit" });
      audit.info(
        { keyId: key.keyId, publicKey: key.publicKey, path, created },
        "audit checkpoints signed with this key",
      );
      const { nc } = context.nats;
      const made = new AuditCheckpointer({
        log,
        key,
        publish: (c) => nc.publish(AUDIT_CHECKPOINTS_SUBJECT, JSON.stringify(c)),
        clock,
        deadlines,
        logger: audit,
        every,
        intervalMs,
        startAt: deps.nodes.headAtStart.get(),
      });
      processors.add(made);
      checkpointer.set(made);
    },

    async arm() {
      const made = checkpointer.get();
      if (made === undefined) return;
      await made.start();
      // Run before the store and NATS close (stop steps run last first): what was stored up to the stop is signed.
      stops.add({
        name: "signing the last audit checkpoint",
        run: async () => {
          made.stop();
          await made.checkpoint();
        },
      });
    },
  };
}
