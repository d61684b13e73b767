const UNITS: Record<string, number> = {
  "": 1,
  b: 1,
  kb: 1000,
  kib: 1024,
  mb: 1000 ** 2,
  mib: 1024 ** 2,
  gb: 1000 ** 3,
  gib: 1024 ** 3,
  tb: 1000 ** 4,
  tib: 1024 ** 4,
};

/** `1073741824`, `512MiB`, `1GB` → bytes; undefined for anything else. */
export function parseByteSize(text: string): number | undefined {
  const m = /^(\d{1,16})\s*([a-zA-Z]{0,3})$/.exec(text.trim());
  if (!m) return undefined;
  const unit = UNITS[(m[2] as string).toLowerCase()];
  if (unit === undefined) return undefined;
  const n = Number(m[1]) * unit;
  return Number.isSafeInteger(n) ? n : undefined;
}

/** A size in the largest unit that divides it exactly (1GiB, 1536KiB), so it parses back to the same number. */
export function formatExactBytes(n: number): string {
  for (const [suffix, size] of [
    ["TiB", 1024 ** 4],
    ["GiB", 1024 ** 3],
    ["MiB", 1024 ** 2],
    ["KiB", 1024],
  ] as const) {
    if (n >= size && n % size === 0) return `${n / size}${suffix}`;
  }
  return String(n);
}
