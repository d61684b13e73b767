/**
 * What an execution asks for and what a node offers, in whole units so that placement arithmetic
 * is exact: CPU in millicores (Bacalhau's "250m"; its float cores would make 0.1 + 0.2 ≠ 0.3),
 * memory and disk in bytes, GPUs as a count.
 */
export interface Resources {
  readonly cpuMillis: number;
  readonly memoryBytes: number;
  readonly diskBytes: number;
  readonly gpus: number;
}

export const NO_RESOURCES: Resources = Object.freeze({ cpuMillis: 0, memoryBytes: 0, diskBytes: 0, gpus: 0 });

/** Bacalhau's models.Resources as nodes report it (CPU in cores, Memory and Disk in bytes, GPU a count). */
export interface BacalhauResources {
  readonly CPU?: number;
  readonly Memory?: number;
  readonly Disk?: number;
  readonly GPU?: number;
}

/** A node's reported capacity in placement units; a fraction of a millicore is not capacity. */
export function fromBacalhauResources(r: BacalhauResources): Resources {
  return {
    cpuMillis: Math.floor(Math.round((r.CPU ?? 0) * 1e6) / 1e3),
    memoryBytes: Math.floor(r.Memory ?? 0),
    diskBytes: Math.floor(r.Disk ?? 0),
    gpus: Math.floor(r.GPU ?? 0),
  };
}

export function addResources(a: Resources, b: Resources): Resources {
  return {
    cpuMillis: a.cpuMillis + b.cpuMillis,
    memoryBytes: a.memoryBytes + b.memoryBytes,
    diskBytes: a.diskBytes + b.diskBytes,
    gpus: a.gpus + b.gpus,
  };
}

/** a − b per resource, never below zero (a node can be placed past what it now reports). */
export function subtractResources(a: Resources, b: Resources): Resources {
  return {
    cpuMillis: Math.max(0, a.cpuMillis - b.cpuMillis),
    memoryBytes: Math.max(0, a.memoryBytes - b.memoryBytes),
    diskBytes: Math.max(0, a.diskBytes - b.diskBytes),
    gpus: Math.max(0, a.gpus - b.gpus),
  };
}

/** Bacalhau's LessThanEq: every resource of `a` is at most that of `b`. */
export function fitsWithin(a: Resources, b: Resources): boolean {
  return a.cpuMillis <= b.cpuMillis && a.memoryBytes <= b.memoryBytes && a.diskBytes <= b.diskBytes && a.gpus <= b.gpus;
}

export function isZeroResources(r: Resources): boolean {
  return r.cpuMillis === 0 && r.memoryBytes === 0 && r.diskBytes === 0 && r.gpus === 0;
}

/** go-humanize's Bytes (SI units, as Bacalhau prints memory and disk): "12 GB", "1.5 MB", "7 B". */
export function humanBytes(bytes: number): string {
  if (bytes < 10) return `${bytes} B`;
  const units = ["B", "kB", "MB", "GB", "TB", "PB", "EB"];
  // The exponent by comparison, not by logarithms, so that 1e9 is never 1000 MB.
  let e = 0;
  while (e < units.length - 1 && bytes >= 1000 ** (e + 1)) e++;
  const value = Math.floor((bytes / 1000 ** e) * 10 + 0.5) / 10;
  return `${value < 10 ? value.toFixed(1) : value.toFixed(0)} ${units[e]}`;
}

/**
 * Cores with two decimals as Go's %.2f prints them: the same digits as toFixed, except for an
 * exact tie (millicores ≡ 125 mod 250: 0.125, 0.375, …), which Go rounds to even and toFixed up.
 */
export function formatCores(cpuMillis: number): string {
  if (Number.isInteger(cpuMillis) && cpuMillis % 250 === 125) {
    const down = (cpuMillis - 5) / 10;
    const hundredths = down % 2 === 0 ? down : down + 1;
    return (hundredths / 100).toFixed(2);
  }
  return (cpuMillis / 1000).toFixed(2);
}

/** Cores as Go's fmt.Sprint prints a float64: shortest form, "0.5", "2". */
export function plainCores(cpuMillis: number): string {
  return String(cpuMillis / 1000);
}

/** Bacalhau's Resources.String(): "{CPU: 0.20, Memory: 12 GB, Disk: 79 GB, GPU: 0}". */
export function formatResources(r: Resources): string {
  return `{CPU: ${formatCores(r.cpuMillis)}, Memory: ${humanBytes(r.memoryBytes)}, Disk: ${humanBytes(r.diskBytes)}, GPU: ${r.gpus}}`;
}
