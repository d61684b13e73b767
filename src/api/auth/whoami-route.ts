import type { AnonymousAccess } from "../../config/auth-users.ts";
import { defineRoute, type AnyRoute } from "../route.ts";
import { hasCapability } from "./capabilities.ts";
import { principalOf } from "./principal.ts";
import { ANONYMOUS_READS, WHOAMI_ROUTE } from "./route-access.ts";
import { CAPABILITIES, WhoamiResponse } from "./whoami-response.ts";

/**
 * Who the credentials sent name and what they allow, so that a client (the web console) shows only the actions the
 * caller may take. Wrong credentials are a 401, as anywhere; none is an anonymous caller, with the reads
 * `API.Auth.AnonymousAccess: read` grants.
 */
export function whoamiRoute(anonymousAccess: AnonymousAccess): AnyRoute {
  return defineRoute({
    method: "GET",
    path: WHOAMI_ROUTE,
    operationId: "whoami",
    tags: ["Auth"],
    summary: "Who the caller is and what it may do.",
    description:
      "The caller's identity and capabilities (wildcards expanded); without credentials, anonymous, with what API.Auth.AnonymousAccess allows. Wrong credentials: 401",
    capability: "public",
    responses: { "200": { description: "The caller", schema: WhoamiResponse } },
    handler: async (_input, request) => {
      const principal = principalOf(request);
      if (principal === undefined) {
        return {
          Anonymous: true,
          Capabilities: anonymousAccess === "read" ? [...ANONYMOUS_READS] : [],
          AnonymousAccess: anonymousAccess,
        };
      }
      return {
        Id: principal.id,
        Anonymous: false,
        Capabilities: CAPABILITIES.filter((c) => hasCapability(principal.actions, c)),
        AnonymousAccess: anonymousAccess,
      };
    },
  });
}
