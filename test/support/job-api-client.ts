import { expect } from "vitest";

/** An untyped JSON body from the API. */
export type Body = Record<string, any>;

export interface ApiResponse {
  readonly status: number;
  /** The parsed JSON; undefined for an empty body, NDJSON (the logs route) or a result archive: read `text`. */
  readonly body: Body;
  readonly text: string;
  readonly type: string | null;
}

const JOBS = "/api/v1/orchestrator/jobs";

/**
 * The orchestrator's REST API as a user calls it: real HTTP, the user's API key as a bearer token.
 * The address and key are read on every call, since a restarted orchestrator may listen elsewhere
 * and a restarted `shoal serve` may hold a new admin key.
 */
export class JobApiClient {
  constructor(
    private readonly apiUrl: () => string,
    private readonly key: () => string | null,
  ) {}

  /** `key` undefined: this client's key; null: no credentials at all. */
  async call(method: string, path: string, body?: unknown, key: string | null = this.key()): Promise<ApiResponse> {
    const res = await fetch(`${this.apiUrl()}${path}`, {
      method,
      headers: {
        ...(key === null ? {} : { authorization: `Bearer ${key}` }),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    const type = res.headers.get("content-type");
    // NDJSON and a result archive (gzip) are not one JSON document: their text only.
    const notJson = type?.startsWith("application/x-ndjson") === true || type === "application/gzip";
    return { status: res.status, body: (text && !notJson ? JSON.parse(text) : undefined) as Body, text, type };
  }

  /** PUT /jobs, which must accept the job: its answer. */
  async put(spec: unknown): Promise<Body> {
    const res = await this.call("PUT", JOBS, { Job: spec });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body;
  }

  /** PUT /jobs, which must accept the job: the new job's id. */
  async submit(spec: unknown): Promise<string> {
    return (await this.put(spec)).JobID as string;
  }

  /** GET /jobs/{id} with its executions and history. */
  async job(jobId: string): Promise<Body> {
    return (await this.call("GET", `${JOBS}/${jobId}?include=executions,history`)).body;
  }

  /** GET /jobs/{id}/executions, which must answer: its first page. */
  async executions(jobId: string): Promise<Body[]> {
    const res = await this.call("GET", `${JOBS}/${jobId}/executions`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.Items as Body[];
  }

  /** Every history entry of the job (of its current version unless `query` says otherwise), all pages. */
  async history(jobId: string, query = ""): Promise<Body[]> {
    const items: Body[] = [];
    let token = "";
    do {
      const next = `${query ? `&${query}` : ""}${token ? `&next_token=${token}` : ""}`;
      const page = (await this.call("GET", `${JOBS}/${jobId}/history?limit=100${next}`)).body;
      items.push(...(page.Items as Body[]));
      token = page.NextToken ?? "";
    } while (token !== "");
    return items;
  }

  /** DELETE /jobs/{id} with a reason; the caller checks the answer. */
  stop(jobId: string, reason: string): Promise<ApiResponse> {
    return this.call("DELETE", `${JOBS}/${jobId}?reason=${encodeURIComponent(reason)}`);
  }

  /** GET /nodes/{id}. */
  async node(nodeId: string): Promise<Body> {
    return (await this.call("GET", `/api/v1/orchestrator/nodes/${nodeId}`)).body;
  }
}
