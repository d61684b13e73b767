import { authorizationHeader, type ApiCredential, type ResolvedCredentials } from "./api-credentials.ts";
import { describeConnectionError } from "./connection-error.ts";
import { httpRequest, type HttpResponse } from "./http-request.ts";
import { inFlagTerms } from "./in-flag-terms.ts";
import type { TlsTrust } from "./tls-trust.ts";

export class ApiError extends Error {
  override readonly name = "ApiError";
  /**
   * A read the API refused as malformed. What a GET asks comes from the command line (its filters, times, ids), so
   * this is a bad argument: exit 2 with the command's help, as for the CLI's own refusals (main.ts reads it by name).
   */
  readonly badArgument: boolean;

  constructor(
    readonly status: number,
    message: string,
    readonly body: unknown,
    method = "",
  ) {
    super(message);
    this.badArgument = status === 400 && method === "GET";
  }
}

/**
 * Whether a failed request may succeed if made again as it was: the API out of reach (an orchestrator restarting,
 * a connection lost) or a 502/503/504 (a proxy, the store unavailable for a moment).
 */
export function mayPass(e: unknown): e is ApiError {
  return e instanceof ApiError && (e.status === 0 || e.status === 502 || e.status === 503 || e.status === 504);
}

const NO_CREDENTIALS: ResolvedCredentials = { candidates: [], notes: [] };

/** A small client for Shoal's REST API, used by `shoal node …`. */
export class ApiClient {
  /** Which candidate credential the API accepted last; later requests start there. */
  private current = 0;

  constructor(
    readonly baseUrl: string,
    private readonly credentials: ResolvedCredentials = NO_CREDENTIALS,
    /** What HTTPS trusts (absent: the system's CAs, or plain HTTP). */
    readonly tls?: TlsTrust,
  ) {}

  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const { candidates, anonymousFallback } = this.credentials;
    const attempts: (ApiCredential | undefined)[] =
      candidates.length === 0 || anonymousFallback ? [...candidates, undefined] : [...candidates];
    const first = this.current;
    for (;;) {
      const credential = attempts[this.current];
      const response = await this.send(
        method,
        path,
        body,
        credential === undefined ? undefined : authorizationHeader(credential),
      );
      const text = await response.text();
      const parsed = text === "" ? undefined : (JSON.parse(text) as unknown);
      if (response.ok) return parsed as T;
      // A 401 wrote nothing, so trying the next candidate (serve's key, devstack's, none) is safe.
      if (response.status === 401 && this.current + 1 < attempts.length) {
        this.current++;
        continue;
      }
      const message = inFlagTerms(
        (parsed as { Message?: string } | undefined)?.Message ?? `HTTP ${response.status}`,
        parsed,
        path,
      );
      throw new ApiError(
        response.status,
        response.status === 401 ? `${message} (${this.describe(attempts.slice(first, this.current + 1))})` : message,
        parsed,
        method,
      );
    }
  }

  /**
   * The Authorization header of the credential the API accepted last (none: anonymous), for requests this client does
   * not make itself (a stream).
   */
  get acceptedAuthorization(): string | undefined {
    const { candidates } = this.credentials;
    const credential = candidates[this.current];
    return credential === undefined ? undefined : authorizationHeader(credential);
  }

  private async send(
    method: string,
    path: string,
    body: unknown,
    authorization: string | undefined,
  ): Promise<HttpResponse> {
    try {
      return await httpRequest(`${this.baseUrl}${path}`, {
        method,
        headers: {
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...(authorization === undefined ? {} : { authorization }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        ...(this.tls === undefined ? {} : { tls: this.tls }),
      });
    } catch (e) {
      throw new ApiError(0, describeConnectionError(this.baseUrl, e, this.tls), undefined);
    }
  }

  private describe(tried: readonly (ApiCredential | undefined)[]): string {
    const sent = `sent ${tried.map((c) => c?.source ?? "no credentials").join(", then ")}`;
    if (tried.at(-1) !== undefined) return sent;
    return [`${sent}: pass --api-key or --username/--password, or set SHOAL_API_KEY`, ...this.credentials.notes].join(
      "; ",
    );
  }
}
