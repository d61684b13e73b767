/**
 * What JSON holds, as both sides of the schema fast path need it: a value the fast path vouches
 * for, written or read, is one a JSON round trip gives back unchanged.
 */

/** A plain object as JSON.parse makes them: no class instance (Date, Map) and no toJSON of its own. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** A number that comes back from a JSON round trip as itself (NaN, ±Infinity and -0 do not). */
export const isJsonNumber = (n: number): boolean => Number.isFinite(n) && !Object.is(n, -0);

/**
 * Plain JSON all the way down: what JSON.parse(JSON.stringify(value)) gives back as an equal
 * value. An own "__proto__" key (JSON.parse makes one) is refused: an object built from it would
 * lose it.
 */
export function isJsonValue(value: unknown): boolean {
  switch (typeof value) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return isJsonNumber(value);
    case "object":
      if (value === null) return true;
      if (Array.isArray(value)) {
        if (Object.getPrototypeOf(value) !== Array.prototype) return false;
        for (let i = 0; i < value.length; i++) if (!isJsonValue(value[i])) return false;
        return true;
      }
      if (!isPlainObject(value)) return false;
      for (const k of Object.keys(value)) if (k === "__proto__" || !isJsonValue(value[k])) return false;
      return true;
    default:
      return false;
  }
}
