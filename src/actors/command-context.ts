import { randomUUID } from "node:crypto";
import type { Actor, Lease } from "../events/catalog/event-metadata.ts";

/** Who asks, why, and which inbound message this command answers; becomes the events' metadata. */
export interface CommandContext {
  readonly actor: Actor;
  readonly reason?: string;
  readonly correlationId: string;
  readonly causationId: string;
  /** Among several orchestrators: the lease of the partition owner that writes (its epoch). */
  readonly lease?: Lease;
}

export function commandContext(
  actor: Actor,
  options: { reason?: string; correlationId?: string; causationId?: string } = {},
): CommandContext {
  const causationId = options.causationId ?? randomUUID();
  return {
    actor,
    ...(options.reason === undefined || options.reason === "" ? {} : { reason: options.reason }),
    correlationId: options.correlationId ?? causationId,
    causationId,
  };
}

export const systemContext = (reason: string, causationId?: string): CommandContext =>
  commandContext({ type: "system", id: "node-manager" }, { reason, ...(causationId ? { causationId } : {}) });
