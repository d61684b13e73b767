import { useLocation } from "preact-iso";
import { useMemo } from "preact/hooks";

/** A list page's filters: each a query-string parameter of the page's URL, as the API's query names it. */
export type UrlFilters<T> = { readonly [K in keyof T]: string };

/** The filters the query string holds; a parameter it lacks has its default, and parameters not named are ignored. */
export function filtersFromQuery<T extends UrlFilters<T>>(defaults: T, query: Readonly<Record<string, string>>): T {
  const filters: Record<string, string> = {};
  for (const [name, value] of Object.entries<string>(defaults)) filters[name] = query[name] ?? value;
  return filters as T;
}

/** The query string (`?a=1&b=2`, or "" when every filter has its default) that keeps `filters`. */
export function filtersToSearch<T extends UrlFilters<T>>(defaults: T, filters: T): string {
  const params = new URLSearchParams();
  const initial: Readonly<Record<string, string>> = defaults;
  for (const [name, value] of Object.entries<string>(filters)) if (value !== initial[name]) params.set(name, value);
  return params.size === 0 ? "" : `?${params}`;
}

/**
 * A page's filters kept in its URL's query string, so that a link or a reload shows the same list. Setting them
 * replaces the history entry rather than adding one: Back leaves the page, as it does from any other page.
 * The filters returned are the same object until the query string changes (safe as a hook dependency).
 */
export function useUrlFilters<T extends UrlFilters<T>>(defaults: T): readonly [T, (next: T) => void] {
  const location = useLocation();
  const key = JSON.stringify(Object.keys(defaults).map((name) => location.query[name] ?? null));
  const filters = useMemo(() => filtersFromQuery(defaults, location.query), [key]);
  const set = (next: T) => location.route(`${location.path}${filtersToSearch(defaults, next)}`, true);
  return [filters, set] as const;
}
