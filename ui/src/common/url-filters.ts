/**
 * A list's filters kept in its address, so that a link or a reload shows the same selection: each filter a query
 * parameter, left out while it has its default.
 */
export function filtersFromQuery<F extends Readonly<Record<keyof F, string>>>(
  query: Readonly<Record<string, string | undefined>>,
  defaults: F,
): F {
  const out: Record<string, string> = { ...defaults };
  for (const name of Object.keys(defaults)) {
    const value = query[name];
    if (value !== undefined) out[name] = value;
  }
  return out as unknown as F;
}

/** `path` with the filters that differ from their defaults as its query string. */
export function filtersHref<F extends Readonly<Record<keyof F, string>>>(
  path: string,
  filters: F,
  defaults: F,
): string {
  const params = new URLSearchParams();
  for (const name of Object.keys(filters) as (keyof F & string)[])
    if (filters[name] !== defaults[name]) params.set(name, filters[name]);
  const search = params.toString();
  return search === "" ? path : `${path}?${search}`;
}
