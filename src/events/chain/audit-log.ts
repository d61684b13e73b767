import type { AuditCheckpoint } from "./audit-checkpoint.ts";
import type { ChainGenesisRecord, ChainRow } from "./verify-chain.ts";

export interface AuditGenesis extends ChainGenesisRecord {
  /** Events the genesis covers (stored before the chain began). */
  readonly events: number;
  readonly createdAt: string;
}

/**
 * The hash chain of a store that keeps one (docs/audit.md): its genesis, its linked rows as
 * stored, and its signed checkpoints. An optional capability of an event store: one without it
 * (EventStoreDB) keeps no chain, and the audit routes say so.
 */
export interface AuditLog {
  chainGenesis(): Promise<AuditGenesis>;
  /** Up to `limit` rows after `after`, in position order, with their stored texts and links. */
  chainPage(after: number, limit: number): Promise<ChainRow[]>;
  /** The newest event's position and link (the genesis's when there is none after it). */
  chainHead(): Promise<{ readonly position: number; readonly link: Buffer | null }>;
  auditCheckpoints(after: number, limit: number): Promise<AuditCheckpoint[]>;
  /** The position of the newest stored checkpoint; 0 when there is none. */
  latestCheckpointPosition(): Promise<number>;
  /** Stores a signed checkpoint (idempotent by position). */
  saveAuditCheckpoint(checkpoint: AuditCheckpoint): Promise<void>;
}

export function auditLogOf(store: object): AuditLog | undefined {
  const log = (store as { auditLog?: AuditLog }).auditLog;
  return log;
}
