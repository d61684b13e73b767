/** Where the console goes when there is no page to return to. */
export const HOME = "/ui/nodes";
const SIGN_IN = "/ui/sign-in";

/** The sign-in page's address that returns to `current` (a console path with its query) once signed in. */
export const signInHref = (current: string): string =>
  current.startsWith(SIGN_IN) ? current : `${SIGN_IN}?next=${encodeURIComponent(current)}`;

/** Any origin: only whether `next` stays on it matters. */
const BASE = "http://console.invalid";

/**
 * The console page to return to after signing in: `next` when it is one of the console's own paths, else the nodes.
 * Only a path under /ui/ is followed, never another origin (`//host`, `/\host`, `https:`), and the path is judged as
 * the browser will resolve it (`/ui/../api/…`, `/ui/%2e%2e/…` leave the console): a link cannot send a signed-in
 * operator elsewhere.
 */
export function returnPath(next: string | undefined): string {
  if (next === undefined || !next.startsWith("/ui/")) return HOME;
  if (/[\\\s]/.test(next) || next.includes("//")) return HOME;
  const url = new URL(next, BASE);
  if (url.origin !== BASE || !url.pathname.startsWith("/ui/") || url.pathname.startsWith(SIGN_IN)) return HOME;
  return `${url.pathname}${url.search}${url.hash}`;
}
