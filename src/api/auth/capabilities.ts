import type { ApiAction } from "../../config/auth-users.ts";

/** What a route needs: `read:node`, `write:node`, …, or `read:history`. */
export type RequiredCapability = Exclude<ApiAction, "*" | "read:*" | "write:*">;

/**
 * Bacalhau's matching: `*` grants everything, `read:*` every `read:` capability (the history
 * included), `write:*` every `write:` one, anything else only itself.
 */
export function hasCapability(actions: Iterable<string>, required: RequiredCapability): boolean {
  const isRead = required.startsWith("read:");
  for (const action of actions) {
    if (action === "*" || action === required) return true;
    if (isRead && action === "read:*") return true;
    if (!isRead && action === "write:*") return true;
  }
  return false;
}
