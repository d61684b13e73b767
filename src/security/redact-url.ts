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
