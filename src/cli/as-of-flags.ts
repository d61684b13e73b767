import { wholeNumberFlag } from "./number-flag.ts";
import { print } from "./output-format.ts";
import { UsageError } from "./usage-error.ts";

/** --as-of and --at-position: the read as of a moment instead of now (docs/audit.md, The cluster as of a moment). */
export const AS_OF_OPTIONS = {
  "as-of": { type: "string" },
  "at-position": { type: "string" },
} as const;

interface AsOfValues {
  readonly "as-of"?: string | undefined;
  readonly "at-position"?: string | undefined;
}

/** Adds as_of or at_position to the request's query; the API checks the time and the position against the store. */
export function asOfQuery(values: AsOfValues, q: URLSearchParams, help?: string): void {
  const asOf = values["as-of"];
  const atPosition = values["at-position"];
  if (asOf !== undefined && atPosition !== undefined)
    throw new UsageError("give --as-of or --at-position, not both", help);
  if (asOf !== undefined) q.set("as_of", asOf);
  if (atPosition !== undefined)
    q.set("at_position", String(wholeNumberFlag(atPosition, "--at-position", 0, undefined, help)));
}

/** A table's first line when it shows the past, so that nobody mistakes it for now. */
export function printAsOfHeading(values: AsOfValues): void {
  const asOf = values["as-of"];
  const atPosition = values["at-position"];
  if (asOf !== undefined) print(`As of ${asOf}:`);
  else if (atPosition !== undefined) print(`As of store position ${atPosition}:`);
}
