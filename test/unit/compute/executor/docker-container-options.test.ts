import { describe, expect, it } from "vitest";
import { dockerContainerOptions } from "../../../../src/compute/executor/docker-container-options.ts";
import type { ExecutionSpec } from "../../../../src/compute/executor/executor.ts";

const spec: ExecutionSpec = {
  executionId: "e-00000000-0000-4000-8000-000000000001",
  image: "busybox",
  resources: { cpuMillis: 100, memoryBytes: 64 * 1024 * 1024 },
};
const confinement = { pidsLimit: 64, capabilities: [], readOnlyRootFilesystem: true };

describe("a container's mounts", () => {
  it("are its result directories, each writable at its path, and nothing else", () => {
    const outputs = [{ hostPath: "/data/results/staging/e-1/outputs", containerPath: "/outputs" }];
    expect(dockerContainerOptions("n1", undefined, { ...spec, outputs }, 1024, confinement).HostConfig?.Mounts).toEqual(
      [{ Type: "bind", Source: "/data/results/staging/e-1/outputs", Target: "/outputs", ReadOnly: false }],
    );
    const none = dockerContainerOptions("n1", undefined, spec, 1024, confinement).HostConfig;
    expect(none?.Mounts).toBeUndefined();
    expect(none?.Binds).toBeUndefined();
  });
});
