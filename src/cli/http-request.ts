import type { IncomingMessage, RequestOptions } from "node:http";
import { tlsRequestOptions, type TlsTrust } from "./tls-trust.ts";

export interface HttpResponse {
  readonly status: number;
  readonly ok: boolean;
  text(): Promise<string>;
}

/**
 * One HTTP request with node:http, shaped like the part of `fetch` the API client uses.
 * Not `fetch`: loading its implementation (undici) costs ~30 ms of a CLI call's start-up.
 * Rejects with the socket's error (ECONNREFUSED, …) when the server cannot be reached.
 */
export async function httpRequest(
  url: string,
  init: {
    readonly method: string;
    readonly headers: Readonly<Record<string, string>>;
    readonly body?: string;
    readonly tls?: TlsTrust;
  },
): Promise<HttpResponse> {
  const target = new URL(url);
  const { request } = target.protocol === "https:" ? await import("node:https") : await import("node:http");
  const options: RequestOptions = {
    ...(target.protocol === "https:" ? await tlsRequestOptions(init.tls) : {}),
    method: init.method,
    headers: {
      ...init.headers,
      ...(init.body === undefined ? {} : { "content-length": String(Buffer.byteLength(init.body)) }),
    },
  };
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    const req = request(target, options, resolve);
    req.once("error", reject);
    req.end(init.body);
  });
  const chunks: Buffer[] = [];
  const done = new Promise<string>((resolve, reject) => {
    response.on("data", (chunk: Buffer) => chunks.push(chunk));
    response.once("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    response.once("error", reject);
  });
  const status = response.statusCode ?? 0;
  return { status, ok: status >= 200 && status < 300, text: () => done };
}
