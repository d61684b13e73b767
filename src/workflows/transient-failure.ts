import { NatsError } from "nats";
import { ShoalError } from "../errors/shoal-error.ts";
import { StoreUnavailableError, WrongExpectedRevisionError } from "../events/store/store-errors.ts";
import { isUnreachable } from "../transport/unreachable.ts";

/**
 * Whether a workflow step failed for a reason that passes (the store unreachable or full, a
 * concurrent writer, NATS down): the step is worth trying again as it is. Anything else fails the
 * same way every time it is tried, for that entity's data, and ends that entity instead.
 */
export function isTransientFailure(err: unknown): boolean {
  if (err instanceof StoreUnavailableError || err instanceof WrongExpectedRevisionError) return true;
  if (err instanceof ShoalError) return err.kind === "Unavailable";
  return err instanceof NatsError || isUnreachable(err);
}
