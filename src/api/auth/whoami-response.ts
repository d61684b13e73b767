import { Schema } from "effect";
import { API_ACTIONS } from "../../config/auth-users.ts";
import type { RequiredCapability } from "./capabilities.ts";

/** Every capability a route can need, in API_ACTIONS' order (the wildcards are grants, not needs). */
export const CAPABILITIES = API_ACTIONS.filter((a): a is RequiredCapability => !a.includes("*"));

export const WhoamiResponse = Schema.Struct({
  /** The identity the history records for the caller's writes; absent when anonymous. */
  Id: Schema.optional(Schema.String),
  Anonymous: Schema.Boolean,
  /** What the caller may do, wildcards expanded: `read:node`, `write:node`, …, `read:history`. */
  Capabilities: Schema.Array(Schema.Literal(...CAPABILITIES)),
  AnonymousAccess: Schema.Literal("read", "none"),
}).annotations({ identifier: "Whoami" });
