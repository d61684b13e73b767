import type Docker from "dockerode";

/** The limits an operator checks first, named as `docker inspect` names them (its HostConfig). */
const FIELDS = [
  "PidsLimit",
  "SecurityOpt",
  "CapDrop",
  "CapAdd",
  "Privileged",
  "ReadonlyRootfs",
  "Tmpfs",
  "NetworkMode",
  "IpcMode",
  "Memory",
  "MemorySwap",
  "NanoCpus",
] as const;

function text(value: unknown): string {
  if (Array.isArray(value)) return value.join(",");
  if (typeof value === "object" && value !== null) return Object.keys(value).sort().join(",");
  return String(value);
}

/**
 * The limits a container runs under, as strings keyed `HostConfig.<field>` (lists joined with
 * commas, Tmpfs as its mount points): what the node reports with an execution's start, and the
 * API serves as its ComputeState.Details. Fields the engine was not given are left out.
 */
export function dockerContainerDetails(hostConfig: Docker.HostConfig): Record<string, string> {
  const details: Record<string, string> = {};
  for (const field of FIELDS) {
    const value: unknown = hostConfig[field];
    if (value !== undefined && value !== null) details[`HostConfig.${field}`] = text(value);
  }
  return details;
}
