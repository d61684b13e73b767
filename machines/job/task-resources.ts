import type { ResourcesConfig } from "./job-spec.ts";

/**
 * What a task asks for, in Bacalhau's models.Resources units: CPU in cores, Memory and Disk in
 * bytes, GPU as a count; 0 when not asked for.
 */
export interface TaskResources {
  readonly CPU: number;
  readonly Memory: number;
  readonly Disk: number;
  readonly GPU: number;
}

export const NO_RESOURCES: TaskResources = { CPU: 0, Memory: 0, Disk: 0, GPU: 0 };

/** Bacalhau's ResourcesConfig.Normalize: lower case, no spaces or newlines. */
export const normalizeResourceString = (s: string): string => s.toLowerCase().replace(/[ \n]/g, "");

/** Kubernetes' CPU strings as BTBurke/k8sresource reads them: `500m` millicores, or cores (`0.5`, `2`). */
export function parseCpu(text: string): number | undefined {
  const s = normalizeResourceString(text);
  let millicores: number;
  if (s.endsWith("m")) {
    if (!/^\+?\d+$/.test(s.slice(0, -1))) return undefined;
    millicores = Number(s.slice(0, -1));
  } else {
    if (!/^\+?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/.test(s)) return undefined;
    millicores = Math.trunc(Number(s) * 1000);
  }
  return Number.isSafeInteger(millicores) ? millicores / 1000 : undefined;
}

const KB = 1000;
const KIB = 1024;
/** go-humanize's bytesSizeTable, which Bacalhau's memory and disk strings go through. */
const BYTE_UNITS: Readonly<Record<string, number>> = {
  "": 1,
  b: 1,
  k: KB,
  kb: KB,
  ki: KIB,
  kib: KIB,
  m: KB ** 2,
  mb: KB ** 2,
  mi: KIB ** 2,
  mib: KIB ** 2,
  g: KB ** 3,
  gb: KB ** 3,
  gi: KIB ** 3,
  gib: KIB ** 3,
  t: KB ** 4,
  tb: KB ** 4,
  ti: KIB ** 4,
  tib: KIB ** 4,
  p: KB ** 5,
  pb: KB ** 5,
  pi: KIB ** 5,
  pib: KIB ** 5,
};

/**
 * go-humanize's ParseBytes: a number (digits, '.', ',' as a thousands separator) and a unit,
 * `1Gb` = 10⁹ bytes, `1Gi` = 2³⁰. Whole bytes up to 2⁵³ (beyond, JSON numbers lose precision).
 */
export function parseBytes(text: string): number | undefined {
  const s = normalizeResourceString(text);
  const match = /^([\d.,]*)(.*)$/.exec(s);
  if (!match) return undefined;
  const number = (match[1] as string).replace(/,/g, "");
  if (!/^(\d+\.?\d*|\.\d+)$/.test(number)) return undefined;
  const unit = BYTE_UNITS[match[2] as string];
  if (unit === undefined) return undefined;
  const bytes = Math.trunc(Number(number) * unit);
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

/** A whole number of GPUs (Go's ParseUint). */
export function parseGpu(text: string): number | undefined {
  const s = normalizeResourceString(text);
  if (!/^\d+$/.test(s)) return undefined;
  const n = Number(s);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** What each resource string looks like, for the message that refuses one. */
export const RESOURCE_FORMS = {
  CPU: "cores such as 0.5 or 2, or millicores such as 500m",
  Memory: "bytes with a unit such as 512Mb, 1Gb or 1Gi",
  Disk: "bytes with a unit such as 512Mb, 10Gb or 10Gi",
  GPU: "a whole number of GPUs such as 1",
} as const;

export const RESOURCE_PARSERS: Readonly<Record<keyof ResourcesConfig, (s: string) => number | undefined>> = {
  CPU: parseCpu,
  Memory: parseBytes,
  Disk: parseBytes,
  GPU: parseGpu,
};

/**
 * The numbers a stored spec's resource strings stand for (Bacalhau's ResourcesConfig.ToResources).
 * A stored spec was validated, so every present string parses; one that did not would read as 0.
 */
export function parseTaskResources(config: ResourcesConfig): TaskResources {
  const read = (key: keyof ResourcesConfig): number => {
    const text = config[key];
    return text === undefined || text === "" ? 0 : (RESOURCE_PARSERS[key](text) ?? 0);
  };
  return { CPU: read("CPU"), Memory: read("Memory"), Disk: read("Disk"), GPU: read("GPU") };
}
