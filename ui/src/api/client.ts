import { authorization, type Credentials } from "./credentials.ts";

/** What the API answered instead (its error body: Status, Code, Message, Hint, Details). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly hint?: string,
    readonly details?: Readonly<Record<string, unknown>>,
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

  delete<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>("DELETE", path, {}, body);
  }

  /**
   * The response of a streamed route (NDJSON), once it is known to be a 200; a refusal is the API's error as for
   * the other requests. `signal` ends the stream.
   */
  async stream(path: string, query: Query, accept: string, signal: AbortSignal): Promise<Response> {
    const res = await this.send("GET", path, query, accept, undefined, signal);
    if (!res.ok) throw await errorOf(res);
    return res;
  }

  private async request<T>(method: string, path: string, query: Query, body?: unknown): Promise<T> {
    const res = await this.send(method, path, query, "application/json", body);
    if (!res.ok) throw await errorOf(res);
    const text = await res.text();
    return (text === "" ? undefined : JSON.parse(text)) as T;
  }

  private async send(
    method: string,
    path: string,
    query: Query,
    accept: string,
    body?: unknown,
    signal?: AbortSignal,
  ): Promise<Response> {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== "") params.set(name, value);
    const search = params.size > 0 ? `?${params}` : "";
    try {
      return await fetch(`${path}${search}`, {
        method,
        credentials: NO_BROWSER_CREDENTIALS,
        headers: {
          ...this.headers(),
          Accept: accept,
          ...(body === undefined ? {} : { "Content-Type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        ...(signal === undefined ? {} : { signal }),
      });
    } catch (e) {
      if (signal?.aborted) throw e;
      throw new ApiError(0, "Unreachable", `the orchestrator did not answer: ${(e as Error).message}`);
    }
  }
}

/** The API's error body as an ApiError (its status text when the body is not one). */
async function errorOf(res: Response): Promise<ApiError> {
  const text = await res.text();
  let error: { Code?: string; Message?: string; Hint?: string; Details?: Record<string, unknown> } = {};
  try {
    if (text !== "") error = JSON.parse(text) as typeof error;
  } catch {
    // Not the API's error body (a proxy's page, say): the status says what there is to say.
  }
  return new ApiError(
    res.status,
    error.Code ?? String(res.status),
    error.Message ?? res.statusText,
    error.Hint,
    error.Details,
  );
}
