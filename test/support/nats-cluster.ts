import { spawn, type ChildProcess } from "node:child_process";
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { connect, type ConnectionOptions, type NatsConnection } from "nats";
import { tempDir } from "./fixtures.ts";
import { freePort } from "./nats-server.ts";

interface Member {
  readonly name: string;
  readonly port: number;
  readonly clusterPort: number;
  child: ChildProcess | undefined;
}

export interface NatsClusterOptions {
  /**
   * A configuration fragment every server includes (as an operator adds `include nats-operator.conf`), each from its
   * own working directory, so relative paths in it (a resolver's directory) are each server's own.
   */
  readonly include?: string;
  /** How the readiness probe logs in, when the fragment admits no anonymous client. */
  readonly login?: () => Partial<ConnectionOptions>;
}

/**
 * Three real nats-servers with JetStream clustered on loopback ports (as production runs them on
 * three machines), so replicated key-value buckets elect leaders and survive losing one server.
 */
export class TestNatsCluster {
  private constructor(
    private readonly members: Member[],
    private readonly dir: string,
    private readonly routes: string,
    private readonly options: NatsClusterOptions,
  ) {}

  /** The client URL of the server named. */
  url(name: string): string {
    return `nats://127.0.0.1:${this.member(name).port}`;
  }

  /** Every client URL, for a connection that fails over between servers. */
  get urls(): string[] {
    return this.members.map((m) => `nats://127.0.0.1:${m.port}`);
  }

  static async start(size = 3, options: NatsClusterOptions = {}): Promise<TestNatsCluster> {
    const dir = tempDir("shoal-nats-cluster-");
    const ports = await Promise.all(Array.from({ length: 2 * size }, () => freePort()));
    const members: Member[] = Array.from({ length: size }, (_, i) => ({
      name: `n${i + 1}`,
      port: ports[i]!,
      clusterPort: ports[size + i]!,
      child: undefined,
    }));
    const routes = members.map((m) => `nats://127.0.0.1:${m.clusterPort}`).join(",");
    const cluster = new TestNatsCluster(members, dir, routes, options);
    for (const m of members) cluster.spawn(m);
    await cluster.waitForJetStream();
    return cluster;
  }

  /** Kills the server named (SIGKILL: no goodbye to its peers). */
  kill(name: string): void {
    const member = this.member(name);
    if (!member.child) throw new Error(`no running nats-server ${name}`);
    member.child.kill("SIGKILL");
    member.child = undefined;
  }

  /**
   * Stops the server named as an operator does (SIGTERM: it tells its peers it is leaving). A server killed instead
   * stays a candidate for new streams' replicas on its peers until they miss its heartbeats for minutes (nats-server
   * 2.9 waits 150 s), so a one-replica stream made meanwhile may land on it and never answer.
   */
  async shutDown(name: string): Promise<void> {
    const member = this.member(name);
    const child = member.child;
    if (!child) throw new Error(`no running nats-server ${name}`);
    member.child = undefined;
    if (child.exitCode !== null) return;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    await exited;
  }

  /** Sends the server named a signal that does not end it (SIGSTOP: it answers nothing until SIGCONT). */
  signal(name: string, signal: "SIGSTOP" | "SIGCONT"): void {
    const member = this.member(name);
    if (!member.child) throw new Error(`no running nats-server ${name}`);
    member.child.kill(signal);
  }

  /** Starts the server named again, on its ports and its JetStream store, as an operator restarts a dead one. */
  revive(name: string): void {
    const member = this.member(name);
    if (member.child) throw new Error(`nats-server ${name} is running`);
    this.spawn(member);
  }

  private member(name: string): Member {
    const member = this.members.find((m) => m.name === name);
    if (!member) throw new Error(`no nats-server ${name} in this cluster`);
    return member;
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.members.map(async (m) => {
        const child = m.child;
        m.child = undefined;
        if (!child || child.exitCode !== null) return;
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGKILL");
        await exited;
      }),
    );
    rmSync(this.dir, { recursive: true, force: true });
  }

  private spawn(member: Member): void {
    const home = join(this.dir, member.name);
    const args = ["-n", member.name, "-a", "127.0.0.1", "-p", String(member.port), "-js", "-sd"];
    args.push(home, "--cluster_name", "shoal");
    args.push("--cluster", `nats://127.0.0.1:${member.clusterPort}`);
    args.push("--routes", this.routes);
    if (this.options.include === undefined) {
      member.child = spawn("nats-server", args, { stdio: "ignore" });
      return;
    }
    mkdirSync(home, { recursive: true });
    copyFileSync(this.options.include, join(home, "included.conf"));
    writeFileSync(join(home, "server.conf"), "include ./included.conf\n");
    args.push("-c", join(home, "server.conf"));
    member.child = spawn("nats-server", args, { stdio: "ignore", cwd: home });
  }

  /**
   * Ready once a stream with a replica on every running server can be made: the servers found each other, elected a
   * meta leader, and each is known to it as a place for a replica (answering a JetStream request alone comes earlier).
   */
  async waitForJetStream(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last: unknown;
    let attempt = 0;
    while (Date.now() < deadline) {
      let nc: NatsConnection | undefined;
      try {
        nc = await connect({ servers: this.urls, timeout: 1_000, ...this.options.login?.() });
        const jsm = await nc.jetstreamManager({ timeout: 5_000 });
        await jsm.getAccountInfo();
        // A new name each try: a probe placed on a server that is gone (but not yet known to be) never answers, and
        // asking for the same stream again would wait on that placement forever.
        const probe = `READY_PROBE_${process.pid}_${++attempt}`;
        const running = this.members.filter((m) => m.child !== undefined).length;
        await jsm.streams.add({ name: probe, subjects: [`ready.${process.pid}`], num_replicas: running });
        await jsm.streams.delete(probe);
        return;
      } catch (e) {
        last = e;
        await new Promise((r) => setTimeout(r, 200));
      } finally {
        await nc?.close();
      }
    }
    throw new Error(`the nats cluster did not elect a JetStream leader in ${timeoutMs}ms: ${String(last)}`);
  }
}
