import { authorization, type Credentials } from "./credentials.ts";

/** What the API answered instead (its error body: Status, Code, Message, Hint). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly hint?: string,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/**
 * The API's 401 carries a Basic challenge; a fetch that may send the browser's own credentials answers it with the
 * browser's login prompt instead of the error. The console sends its own Authorization header, and needs no cookie.
 */
export const NO_BROWSER_CREDENTIALS: RequestCredentials = "omit";

export type Query = Readonly<Record<string, string | undefined>>;

/** The REST API on this origin, with the signed-in caller's credentials on every request. */
export class ApiClient {
  constructor(readonly credentials: Credentials | undefined) {}

  headers(): Record<string, string> {
    return this.credentials === undefined ? {} : { Authorization: authorization(this.credentials) };
  }

  get<T>(path: string, query: Query = {}): Promise<T> {
    return this.request<T>("GET", path, query);
  }

  put<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>("PUT", path, {}, body);
  }

  private async request<T>(method: string, path: string, query: Query, body?: unknown): Promise<T> {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== "") params.set(name, value);
    const search = params.size > 0 ? `?${params}` : "";
    let res: Response;
    try {
      res = await fetch(`${path}${search}`, {
        method,
        credentials: NO_BROWSER_CREDENTIALS,
        headers: {
          ...this.headers(),
          Accept: "application/json",
          ...(body === undefined ? {} : { "Content-Type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (e) {
      throw new ApiError(0, "Unreachable", `the orchestrator did not answer: ${(e as Error).message}`);
    }
    const text = await res.text();
    const json: unknown = text === "" ? undefined : JSON.parse(text);
    if (!res.ok) {
      const error = (json ?? {}) as { Code?: string; Message?: string; Hint?: string };
      throw new ApiError(res.status, error.Code ?? String(res.status), error.Message ?? res.statusText, error.Hint);
    }
    return json as T;
  }
}
