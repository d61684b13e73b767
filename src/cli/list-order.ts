import { UsageError } from "./usage-error.ts";

/** The orders Bacalhau's list commands take. */
export const ORDER_BY = ["created_at", "modified_at", "id"] as const;

export const ORDER_OPTIONS = {
  "order-by": { type: "string" },
  "order-reversed": { type: "boolean" },
  reverse: { type: "boolean" },
} as const;

export interface ListOrder {
  /** Sets `order_by` and `reverse` on the API's query. */
  readonly query: (q: URLSearchParams) => void;
  /** The same as flags, for the hint that fetches the next page: a cursor holds to the order it was made with. */
  readonly flags: readonly string[];
}

/**
 * `--order-by` (one of ORDER_BY; anything else is a usage error) and `--order-reversed` or `--reverse` of a list
 * command.
 */
export function listOrder(
  values: { readonly "order-by"?: string; readonly "order-reversed"?: boolean; readonly reverse?: boolean },
  helpRef: string,
): ListOrder {
  const orderBy = values["order-by"];
  if (orderBy !== undefined && !(ORDER_BY as readonly string[]).includes(orderBy)) {
    throw new UsageError(`--order-by must be one of ${ORDER_BY.join(", ")}, got ${JSON.stringify(orderBy)}`, helpRef);
  }
  const reversed = values["order-reversed"] === true || values.reverse === true;
  return {
    query: (q) => {
      if (orderBy !== undefined) q.set("order_by", orderBy);
      if (reversed) q.set("reverse", "true");
    },
    flags: [...(orderBy === undefined ? [] : [`--order-by ${orderBy}`]), ...(reversed ? ["--order-reversed"] : [])],
  };
}
