import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { AnonymousAccess, AuthUser } from "../../config/auth-users.ts";
import { ShoalError } from "../../errors/shoal-error.ts";
import { sendError } from "../error-body.ts";
import type { Authenticator } from "./authenticator.ts";
import { hasCapability } from "./capabilities.ts";
import { setPrincipal } from "./principal.ts";
import { routeAccess } from "./route-access.ts";

export interface ApiAuth {
  readonly users: readonly AuthUser[];
  readonly anonymousAccess: AnonymousAccess;
}

const CHALLENGES = ['Basic realm="shoal", charset="UTF-8"', 'Bearer realm="shoal"'];
const HINT =
  "Send Authorization: Bearer <API key> or Basic credentials from API.Auth.Users. With no users configured, `shoal serve` keeps an admin API key in <DataDir>/credentials/api-admin-key, which the CLI on that machine uses.";

function unauthorized(request: FastifyRequest, reply: FastifyReply, message: string): FastifyReply {
  void reply.header("WWW-Authenticate", CHALLENGES);
  return sendError(request, reply, new ShoalError({ kind: "Unauthorized", message, hint: HINT }));
}

/**
 * Authenticates and authorizes every request before its body is read (onRequest), so a caller
 * without the capability is refused before anything is parsed, decided or written. The route's
 * Fastify pattern decides what it needs (see route-access.ts); a request that matches no route
 * goes on to the JSON 404.
 */
export function registerAuth(app: FastifyInstance, auth: ApiAuth, authenticator: Authenticator): void {
  app.addHook("onRequest", async (request, reply) => {
    const route = request.routeOptions.url;
    if (route === undefined) return;
    const access = routeAccess(request.method, route);
    if (access.public && access.identifies !== true) return;
    const header = request.headers.authorization;
    if (header === undefined || header.trim() === "") {
      if (access.public || (access.anonymousRead && auth.anonymousAccess === "read")) return;
      return unauthorized(
        request,
        reply,
        `authentication required: ${request.method} ${route} needs ${access.capability}`,
      );
    }
    const result = await authenticator.authenticate(header);
    if (!result.ok) return unauthorized(request, reply, result.reason);
    const { principal } = result;
    request.log = request.log.child({ user: principal.id });
    if (access.public) return setPrincipal(request, principal);
    if (!hasCapability(principal.actions, access.capability)) {
      return sendError(
        request,
        reply,
        new ShoalError({
          kind: "Forbidden",
          message: `user ${principal.id} does not have the capability ${access.capability}`,
          details: { required: access.capability },
        }),
      );
    }
    setPrincipal(request, principal);
  });
}
