import type { AnonymousAccess } from "../../config/auth-users.ts";
import { routeAccess } from "./route-access.ts";

export const SECURITY_SCHEMES = {
  basicAuth: {
    type: "http",
    scheme: "basic",
    description: "Username and Password of an API.Auth.Users entry (plain or bcrypt in the config)",
  },
  apiKey: {
    type: "http",
    scheme: "bearer",
    description:
      "APIKey of an API.Auth.Users entry, or the admin key `shoal serve` generates in <DataDir>/credentials/api-admin-key when no users are configured",
  },
} as const;

const errorRef = {
  description: "Error",
  content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
};

/**
 * Adds to every operation the security it really has, from the same table the server enforces
 * (route-access.ts), so the document cannot drift from it: `security: []` for public routes, the
 * two schemes (plus `{}` when anonymous read applies), the capability as `x-shoal-capability`,
 * and the 401/403 responses.
 */
export function withSecurity(
  paths: Record<string, Record<string, Record<string, unknown>>>,
  anonymousAccess: AnonymousAccess,
) {
  const out: Record<string, Record<string, Record<string, unknown>>> = {};
  for (const [path, operations] of Object.entries(paths)) {
    const route = path.replace(/\{([^}]+)\}/g, ":$1");
    out[path] = {};
    for (const [method, operation] of Object.entries(operations)) {
      const access = routeAccess(method, route);
      if (access.public && access.identifies === true) {
        // Credentials optional, but checked when sent (whoami).
        out[path][method] = {
          ...operation,
          security: [{ basicAuth: [] }, { apiKey: [] }, {}],
          responses: { ...(operation.responses as Record<string, unknown>), "401": errorRef },
        };
        continue;
      }
      if (access.public) {
        out[path][method] = { ...operation, security: [] };
        continue;
      }
      const anonymous = access.anonymousRead && anonymousAccess === "read";
      out[path][method] = {
        ...operation,
        security: [{ basicAuth: [] }, { apiKey: [] }, ...(anonymous ? [{}] : [])],
        "x-shoal-capability": access.capability,
        responses: { ...(operation.responses as Record<string, unknown>), "401": errorRef, "403": errorRef },
      };
    }
  }
  return out;
}
