import { existsSync, readFileSync } from "node:fs";
import { connect } from "nats";
import type { Logger } from "pino";
import { writeFileAtomic } from "../../fs/write-file-atomic.ts";
import { newSecret } from "../../security/secret-file.ts";
import { joinNatsPassword } from "../join-proof.ts";
import {
  EVENTS_READER_PERMISSIONS,
  EVENTS_READER_USER,
  JOIN_PERMISSIONS,
  JOIN_USER,
  NO_PERMISSIONS,
  ORCHESTRATOR_PERMISSIONS,
  ORCHESTRATOR_USER,
  RELOAD_CHECK_USER,
  nodePermissions,
} from "./nats-roles.ts";
import { natsServerConfig, nodeBindingsIn, type NatsServerSettings, type NatsUser } from "./nats-server-config.ts";

export interface NatsSecrets {
  readonly orchestratorPassword: string;
  readonly joinToken: string;
  readonly readerPassword: string;
}

/** The running server that reads the config: its URL, and how to make it re-read the file. */
export interface ReloadTarget {
  readonly url: string;
  reload(): void;
  /**
   * Resolves once the account's JetStream answers again: nats-server re-enables it a little
   * after the users, and until then JetStream requests find no responders.
   */
  jetStreamAnswers(): Promise<void>;
}

export class NatsAccessError extends Error {
  override readonly name = "NatsAccessError";
}

const RELOAD_CONFIRM_MS = 10_000;

/**
 * Who may log in to the orchestrator's nats-server, and with which subjects: the fixed roles
 * plus one nkey user per node with a live credential. Every change rewrites the config file and
 * reloads the server; a change is applied only when a login with this generation's reload-check
 * password succeeds, so a caller told "revoked" knows the server enforces it.
 */
export class NatsAccess {
  private readonly nodes = new Map<string, string>();
  private reloadCheckPassword = newSecret("reload");
  private target: ReloadTarget | undefined;
  private running: Promise<void> = Promise.resolve();
  private queued: Promise<void> | undefined;
  /** The server may not enforce `nodes` yet: a change is waiting, or the last reload failed. */
  private behind = false;

  private constructor(
    readonly file: string,
    private readonly settings: NatsServerSettings,
    private readonly fixedUsers: readonly NatsUser[],
    private readonly logger: Logger,
  ) {}

  /**
   * Passwords go into the file (0600, beside the generated secrets themselves) as they are:
   * bcrypt there would make every login, a stranger's wrong one included, cost the server a
   * bcrypt comparison, and would guard only what the threat model leaves to the file system.
   * The node keys the previous config admitted stay admitted until the store's say replaces them.
   */
  static create(file: string, settings: NatsServerSettings, secrets: NatsSecrets, logger: Logger): NatsAccess {
    const access = new NatsAccess(
      file,
      settings,
      [
        { user: ORCHESTRATOR_USER, password: secrets.orchestratorPassword, permissions: ORCHESTRATOR_PERMISSIONS },
        { user: JOIN_USER, password: joinNatsPassword(secrets.joinToken), permissions: JOIN_PERMISSIONS },
        { user: EVENTS_READER_USER, password: secrets.readerPassword, permissions: EVENTS_READER_PERMISSIONS },
      ],
      logger,
    );
    if (existsSync(file)) for (const [nodeId, key] of nodeBindingsIn(readFileSync(file, "utf8"))) access.nodes.set(nodeId, key);
    return access;
  }

  get boundNodes(): number {
    return this.nodes.size;
  }

  /** Writes the config for the current bindings; the server reads it when it (re)starts. */
  write(): void {
    this.reloadCheckPassword = newSecret("reload");
    const users: NatsUser[] = [
      ...this.fixedUsers,
      { user: RELOAD_CHECK_USER, password: this.reloadCheckPassword, permissions: NO_PERMISSIONS },
      ...[...this.nodes].map(([nodeId, nkey]) => ({ nkey, permissions: nodePermissions(nodeId) })),
    ];
    writeFileAtomic(this.file, `${natsServerConfig(this.settings, users)}\n`, 0o600);
  }

  attach(target: ReloadTarget): void {
    this.target = target;
  }

  /** After an outage: if the server may be behind on the keys (a reload failed), reload now. */
  catchUp(): Promise<void> {
    return this.behind ? this.flush() : this.running;
  }

  /** Every live binding at once (after recovery from the store). */
  replaceAll(bindings: Iterable<readonly [string, string]>): Promise<void> {
    const next = new Map(bindings);
    // Usually what the server started with (the previous config's keys): no reload needed then.
    if (next.size === this.nodes.size && [...next].every(([nodeId, key]) => this.nodes.get(nodeId) === key)) return this.catchUp();
    this.nodes.clear();
    for (const [nodeId, key] of next) this.nodes.set(nodeId, key);
    return this.flush();
  }

  /** Lets `publicKey` in as `nodeId`, or (undefined) nobody; resolves once the server enforces it. */
  apply(nodeId: string, publicKey: string | undefined): Promise<void> {
    // Nothing new, but a failed reload must not be the answer forever: try it again.
    if (this.nodes.get(nodeId) === publicKey) return this.catchUp();
    if (publicKey === undefined) this.nodes.delete(nodeId);
    else this.nodes.set(nodeId, publicKey);
    return this.flush();
  }

  /** One reload at a time and at most one waiting: changes that arrive meanwhile share the waiting one. */
  private flush(): Promise<void> {
    this.behind = true;
    if (this.queued) return this.queued;
    const next = this.running
      .catch(() => undefined)
      .then(() => {
        this.queued = undefined;
        return this.reloadNow();
      });
    this.queued = next;
    this.running = next;
    return next;
  }

  private async reloadNow(): Promise<void> {
    const started = Date.now();
    this.write();
    const target = this.target;
    if (!target) return;
    target.reload();
    const password = this.reloadCheckPassword;
    let usersApplied = false;
    for (;;) {
      try {
        if (!usersApplied) {
          const nc = await connect({ servers: target.url, user: RELOAD_CHECK_USER, pass: password, reconnect: false, timeout: 2000, name: "shoal-reload-check" });
          await nc.close();
          usersApplied = true;
        }
        await target.jetStreamAnswers();
        // Only if no change arrived meanwhile (a queued reload carries it).
        if (!this.queued) this.behind = false;
        this.logger.debug({ nodes: this.nodes.size, ms: Date.now() - started }, "nats-server reloaded its users");
        return;
      } catch (e) {
        if (Date.now() - started > RELOAD_CONFIRM_MS) {
          throw new NatsAccessError(`nats-server did not apply the new users within ${RELOAD_CONFIRM_MS} ms: ${(e as Error).message}`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }
}
