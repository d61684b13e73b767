import type { seededRandom } from "./seeded-random.ts";

/**
 * Random damage to stored JSON event data, for tests that hold two readers of the same data to
 * the same answer (the schema fast path and Effect; the fold's decode-on-use and the full decode).
 */
export const JUNK: unknown[] = [
  null,
  "",
  "x",
  "bad.id",
  "x".repeat(300),
  `U${"A".repeat(55)}`,
  -1,
  0,
  1.5,
  2 ** 53,
  true,
  false,
  [],
  ["docker"],
  [1],
  {},
  { a: 1 },
  { CPU: 1 },
  "HEALTHY",
  "PENDING",
  "Compute",
];

/** Every place in a JSON value: [parent, key] pairs (the root has none). */
function places(value: unknown, out: [Record<string, unknown> | unknown[], string | number][] = []): typeof out {
  if (Array.isArray(value)) value.forEach((v, i) => (out.push([value, i]), places(v, out)));
  else if (typeof value === "object" && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      out.push([value as Record<string, unknown>, k]);
      places(v, out);
    }
  }
  return out;
}

/** One random change of a stored value: a part replaced, dropped, added, or its keys reordered. */
export function mutate(value: unknown, random: ReturnType<typeof seededRandom>): unknown {
  const copy = JSON.parse(JSON.stringify(value)) as unknown;
  const spots = places(copy);
  const objects = [copy, ...spots.map(([p, k]) => (p as Record<string | number, unknown>)[k])].filter(
    (v): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v),
  );
  switch (random.int(5)) {
    case 0: {
      if (spots.length === 0) return random.pick(JUNK);
      const [parent, key] = random.pick(spots);
      (parent as Record<string | number, unknown>)[key] = random.pick(JUNK);
      return copy;
    }
    case 1: {
      const spot = spots.length > 0 ? random.pick(spots) : undefined;
      if (spot === undefined) return copy;
      const [parent, key] = spot;
      if (Array.isArray(parent)) parent.splice(key as number, 1);
      else delete parent[key as string];
      return copy;
    }
    case 2: {
      if (objects.length === 0) return copy;
      random.pick(objects)[random.pick(["extra", "NodeID", "Labels", "CPU", "__proto__", "1"])] = random.pick(JUNK);
      return copy;
    }
    case 3: {
      if (objects.length === 0) return copy;
      const target = random.pick(objects);
      const entries = Object.entries(target).reverse();
      for (const k of Object.keys(target)) delete target[k];
      for (const [k, v] of entries) target[k] = v;
      return copy;
    }
    default:
      // The same data as a store would hand it back, "__proto__" keys included (JSON.parse keeps them as own keys).
      return JSON.parse(
        JSON.stringify(copy).replace(
          /"Labels":\{(\}?)/,
          (_, empty: string) => `"Labels":{"__proto__":"x"${empty ? "}" : ","}`,
        ),
      ) as unknown;
  }
}
