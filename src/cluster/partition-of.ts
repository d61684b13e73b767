const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const encoder = new TextEncoder();

/**
 * The partition an entity belongs to: FNV-1a (32-bit) of its id's UTF-8 bytes, modulo the count.
 * Every orchestrator of every version must agree on it, so it depends on nothing but the bytes
 * (not on Node's string hashing or a library's). An execution belongs to its job's partition, so
 * callers pass the job id for one.
 */
export function partitionOf(entityId: string, partitions: number): number {
  if (!Number.isInteger(partitions) || partitions < 1)
    throw new RangeError(`partitions must be ≥ 1, got ${partitions}`);
  let hash = FNV_OFFSET;
  for (const byte of encoder.encode(entityId)) {
    hash ^= byte;
    hash = Math.imul(hash, FNV_PRIME) >>> 0;
  }
  return hash % partitions;
}
