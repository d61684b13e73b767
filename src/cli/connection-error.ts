import type { TlsTrust } from "./tls-trust.ts";

const UNTRUSTED = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_GET_ISSUER_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "CERT_UNTRUSTED",
  "CERT_SIGNATURE_FAILURE",
]);

/**
 * Why the API at `baseUrl` could not be reached, said so that the fix is in the message: an untrusted certificate
 * names the flag that trusts it, and speaking HTTPS to plain HTTP (or the reverse) names the scheme to use.
 */
export function describeConnectionError(baseUrl: string, error: unknown, trust: TlsTrust | undefined): string {
  const e = error as NodeJS.ErrnoException & { reason?: string };
  const code = e.code ?? "";
  const text = e.message ?? String(error);
  const at = `the Shoal API at ${baseUrl}`;
  if (UNTRUSTED.has(code)) {
    const tried = trust?.cas.map((c) => c.source) ?? [];
    return (
      `${at} presented a certificate this machine does not trust (${text}; trusted besides the system's CAs: ` +
      `${tried.length === 0 ? "none" : tried.join(", ")}). Pass the CA that signed it with --api-tls-ca-cert FILE ` +
      "(a Shoal-generated one is <DataDir>/credentials/tls/ca.crt on the orchestrator's machine), " +
      "or --insecure to skip the check (then anyone on the way can read the credentials)"
    );
  }
  if (code === "ERR_TLS_CERT_ALTNAME_INVALID") {
    return (
      `${at} presented a certificate that is not for this host (${e.reason ?? text}). Connect by a name it covers, ` +
      "or set API.Host to this name on the orchestrator so that its generated certificate covers it " +
      "(a certificate of your own, API.TLS.CertFile, must be issued for it)"
    );
  }
  if (code === "CERT_HAS_EXPIRED" || code === "CERT_NOT_YET_VALID") {
    return `${at} presented a certificate that is not valid now (${text}); its operator has to renew it`;
  }
  if (baseUrl.startsWith("https:") && /wrong version number|packet length too long|http request/i.test(text)) {
    return (
      `${at} answers plain HTTP, not HTTPS (it runs with API.TLS.Disable): ` +
      `use --api-host ${baseUrl.replace(/^https:/, "http:")} or -c API.TLS.Disable=true, ` +
      "without --api-tls, --api-tls-ca-cert or --insecure (any of them asks for HTTPS)"
    );
  }
  if (baseUrl.startsWith("http:") && (code === "ECONNRESET" || /socket hang up/i.test(text))) {
    return (
      `${at} closed the connection without an answer: if it serves HTTPS (the default), ` +
      `use --api-host ${baseUrl.replace(/^http:/, "https:")} or --api-tls`
    );
  }
  const cause = (e as { cause?: unknown }).cause;
  return `cannot reach ${at}: ${cause === undefined ? text : String(cause)}`;
}
