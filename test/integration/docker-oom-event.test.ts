import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sawOomEvent } from "../../src/compute/executor/docker-oom-event.ts";
import { dockerTestImage } from "../support/docker-test-image.ts";

/**
 * The engine's own record of an OOM kill, read back as the executor reads it when the container's flag came too late:
 * a real container killed at its memory limit, and one that was not.
 */
const docker = new Docker();
const MIB = 1024 * 1024;
const created: string[] = [];
let image: string;

beforeAll(async () => {
  image = await dockerTestImage();
}, 180_000);

afterAll(async () => {
  for (const id of created) await docker.getContainer(id).remove({ force: true });
});

async function runToEnd(script: string): Promise<{ id: string; startedAtMs: number }> {
  const startedAtMs = Date.now();
  const container = await docker.createContainer({
    Image: image,
    Cmd: ["sh", "-c", script],
    HostConfig: { NetworkMode: "none", Memory: 16 * MIB, MemorySwap: 16 * MIB },
  });
  created.push(container.id);
  await container.start();
  await container.wait();
  return { id: container.id, startedAtMs };
}

describe("sawOomEvent", { timeout: 60_000 }, () => {
  it("finds the oom event of a container the kernel killed at its memory limit", async () => {
    const { id, startedAtMs } = await runToEnd("x=$(head -c 100000000 /dev/zero | tr '\\0' a); echo survived");
    let seen = false;
    // The event may trail the exit: looked for as the executor does, a few times.
    for (let i = 0; i < 30 && !seen; i++) {
      seen = await sawOomEvent(docker, id, startedAtMs);
      if (!seen) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(seen).toBe(true);
  });

  it("finds none for a container that ended within its memory", async () => {
    const { id, startedAtMs } = await runToEnd("echo small; exit 137");
    expect(await sawOomEvent(docker, id, startedAtMs)).toBe(false);
  });

  it("answers no, rather than failing, when the engine's events cannot be read", async () => {
    const unreachable = new Docker({ socketPath: "/nonexistent/docker.sock" });
    expect(await sawOomEvent(unreachable, "0123456789ab", Date.now())).toBe(false);
  });
});
