/** What the CLI trusts when it talks HTTPS to the API. */
export interface TlsTrust {
  /** CA certificates (PEM) trusted besides the system's: a given file, this machine's generated CAs. */
  readonly cas: readonly { readonly pem: string; readonly source: string }[];
  /** --insecure: no check of the certificate at all. */
  readonly insecure: boolean;
}

/** node:https request options for this trust; loads node:tls only when a CA is added to the system's. */
export async function tlsRequestOptions(
  trust: TlsTrust | undefined,
): Promise<{ ca?: string[]; rejectUnauthorized?: boolean }> {
  if (trust === undefined) return {};
  if (trust.insecure) return { rejectUnauthorized: false };
  if (trust.cas.length === 0) return {};
  const { rootCertificates } = await import("node:tls");
  return { ca: [...rootCertificates, ...trust.cas.map((c) => c.pem)] };
}
