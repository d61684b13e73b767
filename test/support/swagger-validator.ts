import { readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Checks a JSON value against a definition of Bacalhau's swagger (Swagger 2.0, JSON Schema
 * subset: type, enum, properties, additionalProperties, items, $ref, allOf).
 *
 * Stricter than the document in one way: a property the definition does not name is an error,
 * because Bacalhau's Go structs cannot emit fields they do not have, so a client generated from
 * the swagger never expects one.
 *
 * Truer than the document in another: swag documents every Go integer enum as an integer, but
 * the enums with a MarshalText method (pkg/models job.go, job_history.go, network.go) go over the
 * wire as their names ("Running", "JobLevel", "None"). Those definitions are checked as the
 * names Bacalhau sends: x-enum-varnames without the Go prefix.
 */

type Schema = {
  readonly type?: string;
  readonly enum?: readonly unknown[];
  readonly properties?: Readonly<Record<string, Schema>>;
  readonly additionalProperties?: Schema | boolean;
  readonly items?: Schema;
  readonly $ref?: string;
  readonly allOf?: readonly Schema[];
  readonly "x-enum-varnames"?: readonly string[];
};

/**
 * Bacalhau's swagger.json (in its repository: webui/lib/api/schema/swagger.json): BACALHAU_SWAGGER, else the shared
 * reference beside the checkout.
 */
export const SWAGGER_PATH =
  process.env.BACALHAU_SWAGGER ?? join(import.meta.dirname, "../../../shared/reference/bacalhau-swagger.json");

/** Go enum type → the prefix its stringer trims (`--trimprefix`). */
const TEXT_ENUMS: Readonly<Record<string, string>> = {
  "models.JobStateType": "JobStateType",
  "models.JobHistoryType": "JobHistoryType",
  "models.Network": "Network",
};

export class SwaggerValidator {
  private readonly definitions: Readonly<Record<string, Schema>>;

  constructor(path: string = SWAGGER_PATH) {
    const doc = JSON.parse(readFileSync(path, "utf8")) as { definitions: Record<string, Schema> };
    this.definitions = doc.definitions;
  }

  /** Every mismatch of `value` with definition `name`, as `path: problem`; empty when it conforms. */
  errors(name: string, value: unknown): string[] {
    const out: string[] = [];
    this.check(this.definition(name), name, value, "$", out);
    return out;
  }

  private definition(name: string): Schema {
    const schema = this.definitions[name];
    if (schema === undefined) throw new Error(`swagger has no definition ${name}`);
    return schema;
  }

  private check(schema: Schema, name: string | undefined, value: unknown, at: string, out: string[]): void {
    if (schema.$ref !== undefined) {
      const ref = schema.$ref.replace("#/definitions/", "");
      this.check(this.definition(ref), ref, value, at, out);
      return;
    }
    for (const part of schema.allOf ?? []) this.check(part, undefined, value, at, out);
    const prefix = name === undefined ? undefined : TEXT_ENUMS[name];
    if (prefix !== undefined) {
      const names = (schema["x-enum-varnames"] ?? []).map((n) => n.slice(prefix.length));
      if (typeof value !== "string" || !names.includes(value))
        out.push(`${at}: ${JSON.stringify(value)} is not one of ${names.join(", ")} (${name})`);
      return;
    }
    if (schema.enum !== undefined && !schema.enum.includes(value))
      out.push(`${at}: ${JSON.stringify(value)} is not one of ${schema.enum.join(", ")}`);
    switch (schema.type) {
      case undefined:
        break;
      case "integer":
        if (typeof value !== "number" || !Number.isInteger(value))
          out.push(`${at}: ${JSON.stringify(value)} is not an integer`);
        return;
      case "number":
      case "string":
      case "boolean":
        if (typeof value !== schema.type) out.push(`${at}: ${JSON.stringify(value)} is not a ${schema.type}`);
        return;
      case "array":
        if (!Array.isArray(value)) out.push(`${at}: ${JSON.stringify(value)} is not an array`);
        else if (schema.items !== undefined)
          value.forEach((item, i) => this.check(schema.items!, undefined, item, `${at}[${i}]`, out));
        return;
      case "object":
        this.object(schema, value, at, out);
        return;
      default:
        throw new Error(`swagger type ${schema.type} is not handled by this validator`);
    }
  }

  private object(schema: Schema, value: unknown, at: string, out: string[]): void {
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      out.push(`${at}: ${JSON.stringify(value)} is not an object`);
      return;
    }
    for (const [key, item] of Object.entries(value)) {
      const property = schema.properties?.[key];
      if (property !== undefined) this.check(property, undefined, item, `${at}.${key}`, out);
      else if (typeof schema.additionalProperties === "object")
        this.check(schema.additionalProperties, undefined, item, `${at}.${key}`, out);
      else if (schema.additionalProperties !== true) out.push(`${at}.${key}: not a property of the definition`);
    }
  }
}
