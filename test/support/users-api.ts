import { expect } from "vitest";

/** An untyped JSON body from the API. */
export type Body = Record<string, any>;

/** The Authorization header of a user of API.Auth.Users. */
export const basicAuth = (user: string, password: string): string =>
  `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;

export interface UsersApi {
  /** One request as `authorization` (by default the api's own user); the body parsed as JSON. */
  call(
    method: string,
    path: string,
    authorization?: string,
    body?: unknown,
  ): Promise<{ status: number; text: string; body: Body; headers: Headers }>;
  /** A request that must succeed (200): its body. */
  act(authorization: string, path: string, body: unknown, method?: string): Promise<Body>;
}

/**
 * The REST API as several users call it, each request naming whose credentials it carries. The address is read on
 * every call: a restarted orchestrator may listen elsewhere.
 */
export function usersApi(apiUrl: () => string, defaultAuthorization: string): UsersApi {
  const call: UsersApi["call"] = async (method, path, authorization = defaultAuthorization, body) => {
    const res = await fetch(`${apiUrl()}${path}`, {
      method,
      headers: { authorization, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, text, body: JSON.parse(text) as Body, headers: res.headers };
  };
  const act: UsersApi["act"] = async (authorization, path, body, method = "PUT") => {
    const res = await call(method, path, authorization, body);
    expect(res.status, res.text).toBe(200);
    return res.body;
  };
  return { call, act };
}

const JOBS = "/api/v1/orchestrator/jobs";

/**
 * A batch job submitted as `authorization` that no node can take (zone=nowhere): it queues and stays, so nothing is
 * placed while a test reads. Its id, once the API says it is Queued.
 */
export async function submitQueuedJob(api: UsersApi, authorization: string, name: string): Promise<string> {
  const job = {
    Name: name,
    Type: "batch",
    Constraints: [{ Key: "zone", Operator: "=", Values: ["nowhere"] }],
    Tasks: [
      { Name: "main", Engine: { Type: "docker", Params: { Image: "shoal-test/busybox:1", Parameters: ["true"] } } },
    ],
  };
  const id = (await api.act(authorization, JOBS, { Job: job })).JobID as string;
  const deadline = Date.now() + 10_000;
  while ((await api.call("GET", `${JOBS}/${id}`)).body.Job?.State?.StateType !== "Queued") {
    expect(Date.now()).toBeLessThan(deadline);
    await new Promise((r) => setTimeout(r, 50));
  }
  return id;
}
