import { userInfo } from "node:os";
import { httpRequest, type HttpResponse } from "./http-request.ts";

export class ApiError extends Error {
  override readonly name = "ApiError";
  constructor(
    readonly status: number,
    message: string,
    readonly body: unknown,
  ) {
    super(message);
  }
}

/** A small client for Shoal's REST API, used by `shoal node …`. */
export class ApiClient {
  constructor(readonly baseUrl: string) {}

  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    let response: HttpResponse;
    try {
      response = await httpRequest(`${this.baseUrl}${path}`, {
        method,
        headers: {
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          "x-shoal-actor": safeUser(),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (e) {
      throw new ApiError(0, `cannot reach the Shoal API at ${this.baseUrl}: ${(e as Error).cause ?? (e as Error).message}`, undefined);
    }
    const text = await response.text();
    const parsed = text === "" ? undefined : (JSON.parse(text) as unknown);
    if (!response.ok) {
      const message = (parsed as { Message?: string } | undefined)?.Message ?? `HTTP ${response.status}`;
      throw new ApiError(response.status, message, parsed);
    }
    return parsed as T;
  }
}

function safeUser(): string {
  try {
    const name = userInfo().username;
    return /^[A-Za-z0-9._@-]{1,128}$/.test(name) ? name : "cli";
  } catch {
    return "cli";
  }
}
