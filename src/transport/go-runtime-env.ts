/**
 * The environment that tunes the embedded nats-server's Go runtime (docs/performance.md, Fleet:
 * memory per node): its heap is most of the hub's memory, and Go lets it grow to twice the live
 * heap by default (GOGC=100) and keeps freed pages for a while. 0 leaves a setting to Go (or to
 * whatever Shoal's own environment says).
 */
export function goRuntimeEnv(gogc: number, memoryLimitBytes: number): Record<string, string> {
  return {
    ...(gogc > 0 ? { GOGC: String(gogc) } : {}),
    ...(memoryLimitBytes > 0 ? { GOMEMLIMIT: `${memoryLimitBytes}B` } : {}),
  };
}
