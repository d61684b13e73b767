/**
 * Docker's default capability set (moby's oci/caps/defaults.go): what a container keeps when
 * nothing is dropped. A node may give its containers any of these and nothing more.
 */
export const DOCKER_DEFAULT_CAPABILITIES = [
  "AUDIT_WRITE",
  "CHOWN",
  "DAC_OVERRIDE",
  "FOWNER",
  "FSETID",
  "KILL",
  "MKNOD",
  "NET_BIND_SERVICE",
  "NET_RAW",
  "SETFCAP",
  "SETGID",
  "SETPCAP",
  "SETUID",
  "SYS_CHROOT",
] as const;

/**
 * What an ordinary program run as root in an image needs: owning and writing its files, changing
 * user (package managers drop to their own user), signalling its children, binding a low port.
 * Left out of Docker's set: NET_RAW (forged packets, as Nomad's docker driver drops it), MKNOD
 * (device nodes), AUDIT_WRITE, SETFCAP, SETPCAP and SYS_CHROOT.
 */
export const DEFAULT_CAPABILITIES: readonly string[] = [
  "CHOWN",
  "DAC_OVERRIDE",
  "FOWNER",
  "FSETID",
  "KILL",
  "NET_BIND_SERVICE",
  "SETGID",
  "SETUID",
];

/** A fork bomb stops here; ordinary jobs, even parallel builds, stay well under it. */
export const DEFAULT_PIDS_LIMIT = 1024;

/** How a node confines every container it runs, whatever the job asks. */
export interface ContainerConfinement {
  /** Processes and threads the container may hold at once. */
  readonly pidsLimit: number;
  /** Capabilities kept (all others dropped): a subset of DOCKER_DEFAULT_CAPABILITIES. */
  readonly capabilities: readonly string[];
  /** The image's filesystem read-only, with a tmpfs at /tmp. */
  readonly readOnlyRootFilesystem: boolean;
}

export const DEFAULT_CONFINEMENT: ContainerConfinement = {
  pidsLimit: DEFAULT_PIDS_LIMIT,
  capabilities: DEFAULT_CAPABILITIES,
  readOnlyRootFilesystem: false,
};

/** Why a confinement cannot be applied (a node refuses to start with it), or undefined. */
export function confinementProblem(confinement: ContainerConfinement): string | undefined {
  const { pidsLimit, capabilities } = confinement;
  if (!Number.isSafeInteger(pidsLimit) || pidsLimit < 1) {
    return `the pids limit must be a whole number of at least 1, got ${String(pidsLimit)}`;
  }
  const unknown = capabilities.filter((c) => !(DOCKER_DEFAULT_CAPABILITIES as readonly string[]).includes(c));
  if (unknown.length > 0) {
    const known = DOCKER_DEFAULT_CAPABILITIES.join(", ");
    return `capabilities ${unknown.join(", ")} are not in Docker's default set (${known})`;
  }
  return undefined;
}
