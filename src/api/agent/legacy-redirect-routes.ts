import { LEGACY_REDIRECTS } from "../auth/route-access.ts";
import { defineRoute, type AnyRoute } from "../route.ts";

/** Bacalhau's legacy redirects (`/version`, `/livez`, `/`), served as its server serves them and left undocumented. */
export function legacyRedirectRoutes(): AnyRoute[] {
  return Object.entries(LEGACY_REDIRECTS).map(([path, target]) =>
    defineRoute({
      method: "GET",
      path,
      operationId: `legacyRedirect${path === "/" ? "Root" : path.slice(1).replace(/^./, (c) => c.toUpperCase())}`,
      tags: ["Agent"],
      summary: `Redirects to ${target}.`,
      description: `Moved Permanently (301) to ${target}, as Bacalhau's server answers its legacy path ${path}.`,
      capability: "public",
      undocumented: true,
      responses: { "301": { description: `Location: ${target}` } },
      handler: async (_input, _request, reply) => reply.redirect(target, 301),
    }),
  );
}
