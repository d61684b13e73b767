/** Where the console goes when there is no page to return to. */
export const HOME = "/ui/nodes";
const SIGN_IN = "/ui/sign-in";

/** The sign-in page's address that returns to `current` (a console path with its query) once signed in. */
export const signInHref = (current: string): string =>
  current.startsWith(SIGN_IN) ? current : `${SIGN_IN}?next=${encodeURIComponent(current)}`;

/**
 * The console page to return to after signing in: `next` when it is one of the console's own paths, else the nodes.
 * Only a path under /ui/ is followed, never another origin (`//host`, `/\host`, `https:`): a link cannot send a
 * signed-in operator elsewhere.
 */
export function returnPath(next: string | undefined): string {
  if (next === undefined || !next.startsWith("/ui/") || next.startsWith(SIGN_IN)) return HOME;
  if (/[\\\s]/.test(next) || next.includes("//")) return HOME;
  return next;
}
