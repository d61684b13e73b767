import type { FastifyRequest } from "fastify";
import type { Actor } from "../../events/catalog/event-metadata.ts";
import { ShoalError } from "../../errors/shoal-error.ts";
import type { Principal } from "./authenticator.ts";

const principals = new WeakMap<FastifyRequest, Principal>();

export function setPrincipal(request: FastifyRequest, principal: Principal): void {
  principals.set(request, principal);
}

/**
 * The operator an event is attributed to: the authenticated user, never anything the caller
 * wrote in a header. Every writing route needs credentials, so a missing principal here is a
 * fault in Shoal's own wiring.
 */
export function operatorActor(request: FastifyRequest): Actor {
  const principal = principals.get(request);
  if (principal === undefined)
    throw new ShoalError({ kind: "Internal", message: "no authenticated user on a writing request" });
  return { type: "operator", id: principal.id };
}

/** The authenticated caller; undefined for an anonymous one (a read under AnonymousAccess=read, a public route). */
export function principalOf(request: FastifyRequest): Principal | undefined {
  return principals.get(request);
}
