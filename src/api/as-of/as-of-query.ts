import { Schema } from "effect";
import { ShoalError, badRequest, notFound } from "../../errors/shoal-error.ts";
import type { ClusterAsOf } from "../../projections/as-of/cluster-as-of.ts";
import { DecimalInteger } from "../decimal-integer.ts";
import { parseRfc3339 } from "../events/rfc3339-time.ts";

/** The query parameters that ask a read route for the cluster as of a moment instead of now. */
export const AS_OF_FIELDS = {
  as_of: Schema.optional(Schema.String.pipe(Schema.maxLength(64))),
  at_position: Schema.optional(DecimalInteger(0, 999_999_999_999_999)),
};
export const AsOfQuery = Schema.Struct(AS_OF_FIELDS);
interface AsOfParams {
  readonly as_of?: string | undefined;
  readonly at_position?: number | undefined;
}

export const AS_OF_DESCRIPTIONS = {
  as_of:
    "The answer as of this moment (RFC 3339 with its offset), folded from the stored events up to it (docs/audit.md); not with at_position",
  at_position: "The answer as of this store position (every event up to it folded); not with as_of",
};

/** The response header that says which store position an as-of answer was folded up to. */
export const AS_OF_POSITION_HEADER = "X-Shoal-As-Of-Position";

/**
 * The store position a request's as_of or at_position names, or undefined when it asks for now. Each wrong value is a
 * 400 naming its parameter, and nothing is folded.
 */
export async function asOfPosition(asOf: ClusterAsOf, query: AsOfParams): Promise<number | undefined> {
  if (query.as_of !== undefined && query.at_position !== undefined)
    throw badRequest("query parameters as_of and at_position: give one of them, not both", { field: "as_of" });
  if (query.at_position !== undefined) {
    const head = await asOf.head();
    if (query.at_position > head)
      throw badRequest(
        `query parameter at_position: position ${query.at_position} is beyond the newest event (${head})`,
        {
          field: "at_position",
        },
      );
    return query.at_position;
  }
  if (query.as_of === undefined) return undefined;
  const time = parseRfc3339(query.as_of);
  if (time === undefined)
    throw badRequest(
      `query parameter as_of: ${JSON.stringify(query.as_of)} is not an RFC 3339 time with its offset, like 2026-11-29T10:00:00Z`,
      { field: "as_of" },
    );
  const now = asOf.now();
  if (time > now)
    throw badRequest(
      `query parameter as_of: ${query.as_of} is later than now (${new Date(now).toISOString()}): no state is known for it yet`,
      { field: "as_of" },
    );
  return asOf.positionAt(time);
}

/**
 * A read as of a position; a 404 from it says that moment lacks the node or job, so that a caller does not take it
 * for the cluster now.
 */
export async function readAsOf<T>(position: number, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (e) {
    if (e instanceof ShoalError && e.kind === "NotFound")
      throw notFound(`as of store position ${position}: ${e.message}`);
    throw e;
  }
}
