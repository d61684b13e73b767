import { expect } from "vitest";
import type { ApiAction, AuthUser } from "../../src/config/auth-users.ts";

/** An untyped JSON body from the API. */
export type Body = Record<string, any>;

/** The Authorization header of a user of API.Auth.Users. */
export const basicAuth = (user: string, password: string): string =>
  `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;

/** What an operator may do on nodes and jobs: read and write both. */
export const OPERATOR_ACTIONS: readonly ApiAction[] = ["read:node", "write:node", "read:job", "write:job"];

/** A user of API.Auth.Users with one capability: its entry there, and the Authorization header it signs in with. */
export interface ApiUser {
  readonly entry: AuthUser;
  readonly authorization: string;
}

export const apiUser = (
  username: string,
  password: string,
  actions: readonly ApiAction[],
  alias?: string,
): ApiUser => ({
  entry: {
    ...(alias === undefined ? {} : { Alias: alias }),
    Username: username,
    Password: password,
    Capabilities: [{ Actions: actions }],
  },
  authorization: basicAuth(username, password),
});

const PASSWORDS = { alice: "alice's password", bob: "bob's password" };
type Operator = keyof typeof PASSWORDS;

/** alice and bob, two operators of nodes and jobs; `more` adds actions to both (read:history for the audit tests). */
export const aliceAndBob = (more: readonly ApiAction[] = []): AuthUser[] =>
  (["alice", "bob"] as const).map((who) => apiUser(who, PASSWORDS[who], [...OPERATOR_ACTIONS, ...more]).entry);

export const ALICE = basicAuth("alice", PASSWORDS.alice);
export const BOB = basicAuth("bob", PASSWORDS.bob);

/** The `shoal` flags that sign in as alice or bob. */
export const loginFlags = (who: Operator): string[] => ["--username", who, "--password", PASSWORDS[who]];

export interface UsersApi {
  /**
   * One request as `authorization` (by default the api's own user; null sends no credentials), accepting `accept`
   * when given. A JSON answer's body parsed, else an empty body and the text.
   */
  call(
    method: string,
    path: string,
    authorization?: string | null,
    body?: unknown,
    accept?: string,
  ): Promise<{ status: number; text: string; body: Body; headers: Headers }>;
  /** A request that must succeed (200): its body. */
  act(authorization: string, path: string, body: unknown, method?: string): Promise<Body>;
}

/**
 * The REST API as several users call it, each request naming whose credentials it carries. The address is read on
 * every call: a restarted orchestrator may listen elsewhere.
 */
export function usersApi(apiUrl: () => string, defaultAuthorization: string): UsersApi {
  const call: UsersApi["call"] = async (method, path, authorization = defaultAuthorization, body, accept) => {
    const res = await fetch(`${apiUrl()}${path}`, {
      method,
      headers: {
        ...(authorization === null ? {} : { authorization }),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...(accept === undefined ? {} : { accept }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    const json = res.headers.get("content-type")?.startsWith("application/json") === true;
    return { status: res.status, text, body: (json ? JSON.parse(text) : {}) as Body, headers: res.headers };
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
  while ((await api.call("GET", `${JOBS}/${id}`, authorization)).body.Job?.State?.StateType !== "Queued") {
    expect(Date.now()).toBeLessThan(deadline);
    await new Promise((r) => setTimeout(r, 50));
  }
  return id;
}
