import type Docker from "dockerode";
import type { ContainerConfinement } from "./container-confinement.ts";
import type { BindMount, ExecutionSpec, NetworkType } from "./executor.ts";
import { containerName, executionLabels } from "./docker-labels.ts";

const DOCKER_NETWORK_MODE: Readonly<Record<Exclude<NetworkType, "HTTP">, string>> = {
  None: "none",
  Host: "host",
  Full: "bridge",
};

/**
 * The engine's json-file log is what `logs` and the capture read; it is bounded on disk too
 * (never less than a few times the capture limit, so that a rotation cannot overtake the capture
 * reading the head of the output).
 */
function logConfig(maxOutputBytes: number): { Type: string; Config: Record<string, string> } {
  const maxSize = Math.max(8 * 1024 * 1024, 4 * maxOutputBytes);
  return { Type: "json-file", Config: { "max-size": String(maxSize), "max-file": "2" } };
}

/**
 * How one execution's container is created: limits enforced by the engine, labelled, never
 * auto-removed, and confined by the node (`confinement`) whatever the job asks: a pids limit, no
 * new privileges, only the node's capabilities, no devices, never privileged, and no host path but the
 * execution's inputs (`mounts`, read-only unless the node allowed writing) and its result directories.
 */
export function dockerContainerOptions(
  nodeId: string,
  owner: string | undefined,
  spec: ExecutionSpec,
  maxOutputBytes: number,
  confinement: ContainerConfinement,
  mounts: readonly BindMount[] = [],
): Docker.ContainerCreateOptions {
  const network = spec.network ?? "None";
  const { cpuMillis, memoryBytes } = spec.resources;
  return {
    name: containerName(spec.executionId),
    Image: spec.image,
    ...(spec.entrypoint && spec.entrypoint.length > 0 ? { Entrypoint: [...spec.entrypoint] } : {}),
    ...(spec.parameters && spec.parameters.length > 0 ? { Cmd: [...spec.parameters] } : {}),
    Env: Object.entries(spec.env ?? {}).map(([k, v]) => `${k}=${v}`),
    ...(spec.workingDir ? { WorkingDir: spec.workingDir } : {}),
    Labels: executionLabels(nodeId, owner, spec.executionId, spec.resources, spec.timeoutMs ?? 0),
    Tty: false,
    OpenStdin: false,
    AttachStdin: false,
    AttachStdout: false,
    AttachStderr: false,
    NetworkDisabled: network === "None",
    HostConfig: {
      NetworkMode: DOCKER_NETWORK_MODE[network as Exclude<NetworkType, "HTTP">],
      NanoCpus: cpuMillis * 1_000_000,
      Memory: memoryBytes,
      // No swap: past its memory the container is OOM-killed instead of slowing the node down.
      MemorySwap: memoryBytes,
      PidsLimit: confinement.pidsLimit,
      // setuid binaries in the image cannot raise a process above what it started with.
      SecurityOpt: ["no-new-privileges"],
      CapDrop: ["ALL"],
      CapAdd: [...confinement.capabilities],
      Privileged: false,
      // Not joinable by other containers (a daemon may default to shareable).
      IpcMode: "private",
      ReadonlyRootfs: confinement.readOnlyRootFilesystem,
      // tmpfs pages count against the container's memory, so its size cannot take more than that.
      ...(confinement.readOnlyRootFilesystem ? { Tmpfs: { "/tmp": `rw,nosuid,nodev,size=${memoryBytes}` } } : {}),
      LogConfig: logConfig(maxOutputBytes),
      // The execution's inputs and the node's own directories for its result paths: the only host paths it sees.
      ...(mounts.length === 0 && (spec.outputs ?? []).length === 0
        ? {}
        : {
            Mounts: [
              ...mounts.map((m) => ({
                Type: "bind" as const,
                Source: m.source,
                Target: m.target,
                ReadOnly: m.readOnly,
              })),
              ...(spec.outputs ?? []).map((o) => ({
                Type: "bind" as const,
                Source: o.hostPath,
                Target: o.containerPath,
                ReadOnly: false,
              })),
            ],
          }),
      AutoRemove: false,
      RestartPolicy: { Name: "no" },
    },
  };
}
