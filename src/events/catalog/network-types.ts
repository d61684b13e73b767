/**
 * Bacalhau's models.Network, serialized as its text (MarshalText), as Bacalhau's JSON has it; the
 * index is its number. Dependency-free so that the CLI checks `--network` with the schema's list
 * (job-spec.ts's NetworkType) without loading the schema library.
 */
export const NETWORK_TYPES = ["Default", "None", "Host", "Full", "HTTP", "Bridge"] as const;
