/** How the caller signs in: an API key (Bearer) or an API.Auth.Users username and password (Basic). */
export type Credentials =
  | { readonly kind: "key"; readonly key: string }
  | { readonly kind: "password"; readonly username: string; readonly password: string };

const KEY = "shoal.credentials";

/** The Authorization header for the credentials; UTF-8 in Basic, as the API decodes it. */
export function authorization(credentials: Credentials): string {
  if (credentials.kind === "key") return `Bearer ${credentials.key}`;
  const bytes = new TextEncoder().encode(`${credentials.username}:${credentials.password}`);
  return `Basic ${btoa(String.fromCharCode(...bytes))}`;
}

/**
 * Kept in sessionStorage: they last as long as the tab, are not sent with any request the console does not make
 * itself (no cookie), and never appear in a URL.
 */
export function loadCredentials(): Credentials | undefined {
  const raw = sessionStorage.getItem(KEY);
  if (raw === null) return undefined;
  try {
    return JSON.parse(raw) as Credentials;
  } catch {
    sessionStorage.removeItem(KEY);
    return undefined;
  }
}

export const saveCredentials = (credentials: Credentials): void =>
  sessionStorage.setItem(KEY, JSON.stringify(credentials));

export const forgetCredentials = (): void => sessionStorage.removeItem(KEY);
