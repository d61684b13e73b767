import type { IncomingMessage } from "node:http";
import { ApiError, type ApiClient } from "./api-client.ts";
import { inFlagTerms } from "./in-flag-terms.ts";
import { describeConnectionError } from "./connection-error.ts";
import { tlsRequestOptions } from "./tls-trust.ts";

/**
 * A GET whose answer is NDJSON, read as it comes (a log, an export): with the credential the client's last request
 * was accepted with (make one first, so that a refused credential is reported as it is for any request). An answer
 * that is not a 2xx is thrown as the ApiError its body describes.
 */
export function openNdjson(api: ApiClient, path: string): Promise<IncomingMessage> {
  return openStreamingGet(api, path, { accept: "application/x-ndjson" });
}

/**
 * A GET whose answer is read as it comes, with `headers` (its Accept among them) and the credential the client's last
 * request was accepted with; `signal` aborts it. An answer that is not a 2xx is thrown as the ApiError its body
 * describes; one that cannot be had at all, as an ApiError of status 0.
 */
export async function openStreamingGet(
  api: ApiClient,
  path: string,
  headers: Readonly<Record<string, string>>,
  signal?: AbortSignal,
  /** Bytes as they come (a download) instead of text. */
  binary = false,
): Promise<IncomingMessage> {
  const target = new URL(`${api.baseUrl}${path}`);
  const { request } = target.protocol === "https:" ? await import("node:https") : await import("node:http");
  const authorization = api.acceptedAuthorization;
  const tls = target.protocol === "https:" ? await tlsRequestOptions(api.tls) : {};
  let response: IncomingMessage;
  try {
    response = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = request(
        target,
        {
          ...tls,
          method: "GET",
          headers: { ...headers, ...(authorization === undefined ? {} : { authorization }) },
          ...(signal === undefined ? {} : { signal }),
        },
        resolve,
      );
      req.once("error", reject);
      req.end();
    });
  } catch (e) {
    throw new ApiError(0, describeConnectionError(api.baseUrl, e, api.tls), undefined);
  }
  const status = response.statusCode ?? 0;
  if (status < 200 || status >= 300) throw await refusal(response, path);
  if (!binary) response.setEncoding("utf8");
  return response;
}

async function refusal(response: IncomingMessage, path: string): Promise<ApiError> {
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  let body: unknown;
  try {
    body = text === "" ? undefined : JSON.parse(text);
  } catch {
    body = text;
  }
  const message = (body as { Message?: string } | undefined)?.Message ?? `HTTP ${response.statusCode}`;
  return new ApiError(response.statusCode ?? 0, inFlagTerms(message, body, path), body, "GET");
}

/** The lines of an NDJSON answer as they arrive, without their newlines; blank lines skipped. */
export async function* ndjsonLines(response: IncomingMessage): AsyncGenerator<string> {
  let pending = "";
  for await (const piece of response) {
    pending += piece as string;
    let nl = pending.indexOf("\n");
    while (nl !== -1) {
      const line = pending.slice(0, nl);
      if (line.trim() !== "") yield line;
      pending = pending.slice(nl + 1);
      nl = pending.indexOf("\n");
    }
  }
  if (pending.trim() !== "") yield pending;
}
