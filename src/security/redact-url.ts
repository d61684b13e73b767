/**
 * A configured URL as it may be logged or shown (readiness checks, start-up output): without
 * the user:password (or token) before the host. Hostnames never contain "@", so everything up
 * to the last "@" after each "scheme://" is credentials; cutting there, rather than parsing,
 * also covers passwords with unescaped "/", "," or "?" and lists of URLs
 * (`esdb+discover://u:p@h1,h2`, `nats://a:b@h1,nats://c:d@h2`).
 */
export function redactUrl(url: string): string {
  const parts = url.split("://");
  if (parts.length === 1) return afterLastAt(url); // "user:pw@host:4222", which NATS accepts too
  return parts.map((part, i) => (i === 0 ? part : afterLastAt(part))).join("://");
}

function afterLastAt(part: string): string {
  return part.slice(part.lastIndexOf("@") + 1);
}

/**
 * `text` (a library's error message) without the credentials of `url`: the URL itself is replaced by its redacted
 * form, and its password, as written and decoded, by `***`, wherever they appear. A client that fails to parse a
 * connection string may quote it whole (KurrentDB's native bridge does).
 */
export function redactCredentialsIn(text: string, url: string): string {
  let out = text.replaceAll(url, redactUrl(url));
  for (const secret of passwordsOf(url)) out = out.replaceAll(secret, "***");
  return out;
}

/** The password (or token) of each URL in `url`, as written and percent-decoded. */
function passwordsOf(url: string): string[] {
  const secrets = new Set<string>();
  for (const part of url.split("://").slice(1)) {
    const at = part.lastIndexOf("@");
    if (at < 0) continue;
    const login = part.slice(0, at);
    const secret = login.includes(":") ? login.slice(login.indexOf(":") + 1) : login;
    if (secret === "") continue;
    secrets.add(secret);
    try {
      secrets.add(decodeURIComponent(secret));
    } catch {
      // Not percent-encoded as a URL would be: only its written form can appear.
    }
  }
  return [...secrets];
}
