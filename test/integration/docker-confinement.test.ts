import { randomUUID } from "node:crypto";
import Docker from "dockerode";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_CONFINEMENT, type ContainerConfinement } from "../../src/compute/executor/container-confinement.ts";
import { DockerExecutor } from "../../src/compute/executor/docker-executor.ts";
import { EXECUTION_LABEL, NODE_LABEL } from "../../src/compute/executor/docker-labels.ts";
import type { ExecutionSpec } from "../../src/compute/executor/executor.ts";
import { dockerTestImage } from "../support/docker-test-image.ts";
import { silentLogger } from "../support/fixtures.ts";
import { waitFor } from "../support/shoal-process.ts";

/**
 * The limits a node puts on every container, whatever the job asks, on the real engine: a pids
 * limit a fork bomb stops at, no new privileges, only the node's capabilities, and (opt-in) a
 * read-only root with a writable /tmp.
 */
const docker = new Docker();
const MIB = 1024 * 1024;
let image = "";
const nodeIds: string[] = [];
const executors: DockerExecutor[] = [];

function executor(confinement: Partial<ContainerConfinement> = {}): DockerExecutor {
  const nodeId = `conf-${randomUUID().slice(0, 8)}`;
  nodeIds.push(nodeId);
  const ex = new DockerExecutor({
    nodeId,
    capacity: { cpuMillis: 2000, memoryBytes: 1024 * MIB },
    logger: silentLogger,
    docker,
    stopGraceSeconds: 0,
    confinement: { ...DEFAULT_CONFINEMENT, ...confinement },
  });
  executors.push(ex);
  return ex;
}

function spec(command: string, overrides: Partial<ExecutionSpec> = {}): ExecutionSpec {
  return {
    executionId: `e-${randomUUID()}`,
    image,
    entrypoint: ["sh", "-c"],
    parameters: [command],
    resources: { cpuMillis: 500, memoryBytes: 64 * MIB },
    ...overrides,
  };
}

async function containerOf(executionId: string): Promise<Docker.Container> {
  let id = "";
  await waitFor(
    async () => {
      const label = [`${EXECUTION_LABEL}=${executionId}`];
      const found = await docker.listContainers({ all: true, filters: { label } });
      id = found[0]?.Id ?? "";
      return id !== "";
    },
    10_000,
    () => `the container of ${executionId}`,
  );
  return docker.getContainer(id);
}

/**
 * A bounded fork bomb: a subshell starts at most 300 `sleep 3` in the background (a few hundred
 * short-lived processes even with no limit at all), then the shell reads its cgroup's pids.max and
 * pids.current with builtins only (no fork needed once the limit is reached).
 */
const FORK_BOMB = [
  "P=/sys/fs/cgroup/pids; [ -e $P/pids.max ] || P=/sys/fs/cgroup",
  'read max < $P/pids.max; echo "max $max"',
  '( i=0; while [ $i -lt 300 ]; do sleep 3 & i=$((i+1)); done; echo "forked $i" ); echo "bomb ended"',
  'read current < $P/pids.current; echo "current $current"',
].join("\n");

beforeAll(async () => {
  image = await dockerTestImage();
}, 60_000);

afterEach(async () => {
  for (const ex of executors.splice(0)) await ex.close();
});

afterAll(async () => {
  for (const nodeId of nodeIds) {
    const left = await docker.listContainers({ all: true, filters: { label: [`${NODE_LABEL}=${nodeId}`] } });
    for (const c of left) await docker.getContainer(c.Id).remove({ force: true });
  }
});

describe("DockerExecutor: a container cannot take the node down", () => {
  it("a fork bomb stops at the pids limit: forks fail past it, the execution ends with its output, the next one runs", async () => {
    const ex = executor({ pidsLimit: 64 });
    const bomb = spec(FORK_BOMB, { timeoutMs: 60_000 });
    const run = await ex.run(bomb);
    expect(await run.started).toBe(true);
    const container = await containerOf(bomb.executionId);
    // Watched from outside too, while it runs: the engine's own count of the container's processes.
    let most = 0;
    let watching = true;
    const watch = (async () => {
      while (watching) {
        try {
          const options = { stream: false, "one-shot": true } as never;
          const stats = (await container.stats(options)) as unknown as { pids_stats?: { current?: number } };
          most = Math.max(most, stats.pids_stats?.current ?? 0);
        } catch {
          return; // removed at its end
        }
      }
    })();
    const result = await run.done;
    watching = false;
    await watch;

    const out = result.runOutput.STDOUT;
    expect(out).toContain("max 64\n");
    expect(out).toContain("bomb ended\n");
    // The subshell never got its 300 sleepers: a fork failed at the limit and ended it.
    expect(out).not.toContain("forked 300");
    expect(result.runOutput.STDERR).toMatch(/can't fork|Resource temporarily unavailable/);
    const current = Number(/current (\d+)/.exec(out)?.[1]);
    expect(current).toBeGreaterThan(32);
    expect(current).toBeLessThanOrEqual(64);
    expect(most).toBeLessThanOrEqual(64);
    expect(result).toMatchObject({ state: "Completed", reason: "exited" });

    // The node is fine: its next execution runs as usual.
    const next = await (await ex.run(spec("echo next"))).done;
    expect(next).toMatchObject({ state: "Completed" });
    expect(next.runOutput.STDOUT).toBe("next\n");
  }, 90_000);

  it("creates containers with the pids limit, no new privileges and only the node's capabilities, and says so in its details", async () => {
    const ex = executor({ pidsLimit: 200 });
    const s = spec("grep -E '^(CapEff|CapBnd|NoNewPrivs)' /proc/self/status; sleep 30");
    const run = await ex.run(s);
    expect(await run.started).toBe(true);
    const inspected = await (await containerOf(s.executionId)).inspect();
    const host = inspected.HostConfig;
    expect(host.PidsLimit).toBe(200);
    expect(host.SecurityOpt).toEqual(["no-new-privileges"]);
    expect(host.CapDrop).toEqual(["ALL"]);
    expect([...(host.CapAdd ?? [])].sort()).toEqual([
      "CHOWN",
      "DAC_OVERRIDE",
      "FOWNER",
      "FSETID",
      "KILL",
      "NET_BIND_SERVICE",
      "SETGID",
      "SETUID",
    ]);
    expect(host.Privileged).toBe(false);
    expect(host.ReadonlyRootfs).toBe(false);
    expect(host.Binds ?? []).toEqual([]);
    expect(inspected.Mounts).toEqual([]);
    expect(host.Devices ?? []).toEqual([]);
    expect(host.NetworkMode).toBe("none");
    expect(run.details).toEqual({
      "HostConfig.PidsLimit": "200",
      "HostConfig.SecurityOpt": "no-new-privileges",
      "HostConfig.CapDrop": "ALL",
      "HostConfig.CapAdd": "CHOWN,DAC_OVERRIDE,FOWNER,FSETID,KILL,NET_BIND_SERVICE,SETGID,SETUID",
      "HostConfig.Privileged": "false",
      "HostConfig.ReadonlyRootfs": "false",
      "HostConfig.NetworkMode": "none",
      "HostConfig.IpcMode": "private",
      "HostConfig.Memory": String(64 * MIB),
      "HostConfig.MemorySwap": String(64 * MIB),
      "HostConfig.NanoCpus": String(500_000_000),
    });
    const written = async () => (await ex.logs(s.executionId)[Symbol.asyncIterator]().next()).done === false;
    await waitFor(written, 10_000, () => "its first lines");
    const result = await ex.cancel(s.executionId);
    // Inside: the kernel's view. CHOWN 0, DAC_OVERRIDE 1, FOWNER 3, FSETID 4, KILL 5, SETGID 6,
    // SETUID 7, NET_BIND_SERVICE 10.
    const lines = result.runOutput.STDOUT.trim().split("\n");
    const status = Object.fromEntries(lines.map((l) => l.split(/:\s+/) as [string, string]));
    expect(status).toEqual({ CapEff: "00000000000004fb", CapBnd: "00000000000004fb", NoNewPrivs: "1" });
  }, 60_000);

  it("a node that restarts finds the limits of the containers it adopts", async () => {
    const before = executor({ pidsLimit: 100 });
    const run = await before.run(spec("sleep 30"));
    expect(await run.started).toBe(true);
    await before.close();
    const after = new DockerExecutor({
      nodeId: before.ledger.nodeId,
      capacity: { cpuMillis: 2000, memoryBytes: 1024 * MIB },
      logger: silentLogger,
      docker,
      stopGraceSeconds: 0,
    });
    executors.push(after);
    const report = await after.reconcile([run.executionId]);
    const adopted = report.adopted[0]!.execution;
    expect(await adopted.started).toBe(true);
    // As it was created, not as this executor would create one now.
    expect(adopted.details).toEqual(run.details);
    expect(adopted.details["HostConfig.PidsLimit"]).toBe("100");
    expect((await after.cancel(run.executionId)).state).toBe("Cancelled");
  }, 60_000);

  it("with a read-only root filesystem: the image cannot be written, /tmp can, and an ordinary job still runs", async () => {
    const ex = executor({ readOnlyRootFilesystem: true });
    const script =
      "touch /root/x 2>&1 || echo root-refused; echo kept > /tmp/f && cat /tmp/f; grep ' /tmp ' /proc/mounts | cut -d' ' -f3";
    const s = spec(script, { workingDir: "/tmp" });
    const run = await ex.run(s);
    const result = await run.done;
    expect(result.state).toBe("Completed");
    expect(result.runOutput.STDOUT).toMatch(/Read-only file system\nroot-refused\nkept\ntmpfs\n$/);
    expect(run.details).toMatchObject({ "HostConfig.ReadonlyRootfs": "true", "HostConfig.Tmpfs": "/tmp" });
  }, 60_000);
});
