import { Schema } from "effect";

/**
 * A whole number from a query string, written in plain decimal digits. NumberFromString alone
 * takes what Number() takes — "0x10", "1e2", " 5", "+5" — and a query parameter should mean
 * exactly what it says or be refused with a 400. Documented as what it means: an integer in range.
 */
export const DecimalInteger = (min: number, max: number) =>
  Schema.String.pipe(
    Schema.pattern(/^[0-9]{1,15}$/, { message: () => "must be a whole number written in decimal digits" }),
    Schema.compose(Schema.NumberFromString),
    Schema.between(min, max),
  ).annotations({ jsonSchema: { type: "integer", minimum: min, maximum: max } });
