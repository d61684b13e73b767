import type Database from "better-sqlite3";
import type { AuditCheckpoint } from "../chain/audit-checkpoint.ts";
import type { AuditGenesis, AuditLog } from "../chain/audit-log.ts";
import type { ChainRow } from "../chain/verify-chain.ts";
import { SqliteChainReader } from "./sqlite-chain-source.ts";

/**
 * The SQLite store's chain, read on the store's own connection (each read sees the last commit).
 * Checkpoints are saved on it too: they are rare (one per interval), and a busy writer thread is
 * waited for by the connection's busy timeout.
 */
export class SqliteAuditLog implements AuditLog {
  private readonly reader: SqliteChainReader;
  private readonly statements;

  constructor(
    db: Database.Database,
    /** Runs a read or write on the store, as the store guards its own (closed, unavailable). */
    private readonly run: <A>(f: () => A) => A,
  ) {
    this.reader = new SqliteChainReader(db);
    this.statements = {
      newest: db.prepare("SELECT position, link FROM events ORDER BY position DESC LIMIT 1"),
      latestCheckpoint: db.prepare("SELECT max(position) FROM audit_checkpoints").pluck(),
      save: db.prepare(
        "INSERT OR IGNORE INTO audit_checkpoints (position, link, time, key_id, public_key, signature) " +
          "VALUES (?, ?, ?, ?, ?, ?)",
      ),
    };
  }

  async chainGenesis(): Promise<AuditGenesis> {
    return this.run(() => this.reader.genesis() as AuditGenesis);
  }

  async chainPage(after: number, limit: number): Promise<ChainRow[]> {
    return this.run(() => this.reader.page(after, limit));
  }

  async chainHead(): Promise<{ position: number; link: Buffer | null }> {
    return this.run(() => {
      const genesis = this.reader.genesis();
      const newest = this.statements.newest.get() as { position: number; link: Buffer | null } | undefined;
      return newest === undefined || newest.position <= genesis.afterPosition
        ? { position: genesis.afterPosition, link: Buffer.from(genesis.link) }
        : newest;
    });
  }

  async auditCheckpoints(after: number, limit: number): Promise<AuditCheckpoint[]> {
    return this.run(() => this.reader.checkpoints(after, limit));
  }

  async latestCheckpointPosition(): Promise<number> {
    return this.run(() => (this.statements.latestCheckpoint.get() as number | null) ?? 0);
  }

  async saveAuditCheckpoint(c: AuditCheckpoint): Promise<void> {
    this.run(() =>
      this.statements.save.run(c.position, Buffer.from(c.link, "hex"), c.time, c.keyId, c.publicKey, c.signature),
    );
  }
}
