import type { SchemaAST as AST } from "effect";
import { Schema } from "effect";
import { describe, expect, it } from "vitest";
import { SubmittedJob, SubmittedTask } from "../../../src/events/catalog/submitted-job.ts";
import {
  Checks,
  MissingMessage,
  ShapeMessage,
  UnknownFieldMessage,
  walkSchema,
  type Check,
  type Findings,
  type Hooks,
  type SpecProblem,
} from "../../../src/events/catalog/walk-schema.ts";

function findings(): Findings {
  const problems: SpecProblem[] = [];
  return { problems, warnings: [], problem: (path, message) => problems.push({ path, message }) };
}
const text = (f: Findings): string[] => f.problems.map((p) => `${p.path}: ${p.message}`);

const Port = Schema.Number.annotations({ message: () => "must be a number" });
const Name = Schema.String.annotations({ message: () => "must be a string", [MissingMessage]: () => "missing name" });
const positive: Check = (n, at, f) => {
  if ((n as number) <= 0) f.problem(at.path, "must be positive");
};
const Service = Schema.Struct({
  Name,
  Ports: Schema.optional(
    Schema.Array(Port.annotations({ [Checks]: [positive] })).annotations({ [ShapeMessage]: "must be a list of ports" }),
  ),
  Labels: Schema.optional(
    Schema.Record({ key: Schema.String, value: Schema.String.annotations({ message: () => "must be text" }) }),
  ),
  Limits: Schema.optional(
    Schema.Struct({ Memory: Schema.optional(Port) }).annotations({
      [UnknownFieldMessage]: (key: string) => `${key} is not a limit`,
    }),
  ),
});
const Doc = Schema.Struct({ Services: Schema.Array(Service) });

describe("reading a document with a schema", () => {
  it("names every problem with its path: nested fields, list items, map entries; the rest is read", () => {
    const f = findings();
    const read = walkSchema(
      Doc,
      {
        services: [
          { name: "web", ports: [80, "http", -1], labels: { tier: "front", replicas: 2 }, extra: true },
          { Ports: "80", Limits: { memory: 1, Swap: 2 } },
          "db",
        ],
      },
      {},
      f,
    );
    expect(text(f)).toEqual([
      "Services[0].Ports[1]: must be a number",
      "Services[0].Ports[2]: must be positive",
      "Services[0].Labels.replicas: must be text",
      "Services[1].Name: missing name",
      "Services[1].Ports: must be a list of ports",
      "Services[1].Limits.Swap: Swap is not a limit",
      "Services[2]: must be a map of fields",
    ]);
    expect(read).toEqual({
      Services: [{ Name: "web", Ports: [80, -1], Labels: { tier: "front" } }, { Limits: { Memory: 1 } }],
    });
  });

  it("runs a caller's hooks at their field, in the order of the fields", () => {
    const f = findings();
    const hooks: Hooks = {
      "Services[].Name": (name, at, g) => {
        if ((name as string).length > 3) g.problem(at.path, "too long");
      },
      "Services[].Labels.*": (value, at, g) => g.problem(at.path, `saw ${String(value)}`),
    };
    walkSchema(Doc, { Services: [{ Name: "frontend", Ports: [0], Labels: { a: "x" } }] }, hooks, f);
    expect(text(f)).toEqual([
      "Services[0].Name: too long",
      "Services[0].Ports[0]: must be positive",
      "Services[0].Labels.a: saw x",
    ]);
  });
});

/** The required fields of a struct schema, with the message the schema gives when one is missing. */
function requiredFields(schema: Schema.Schema.Any): { name: string; message: string }[] {
  const ast = schema.ast as AST.TypeLiteral;
  return ast.propertySignatures
    .filter((p) => !p.isOptional)
    .map((p) => {
      const missing = p.type.annotations[MissingMessage] as ((raw: unknown) => string) | undefined;
      return { name: String(p.name), message: missing ? missing(undefined) : "is required" };
    });
}

describe("a submitted job, read with the catalog's SubmittedJob schema", () => {
  const task = { Name: "main", Engine: { Type: "docker", Params: { Image: "busybox" } } };
  const valid = { Type: "batch", Tasks: [task] };

  it("names each required field the schema declares, at its path, when it is left out", () => {
    const fields = [
      ...requiredFields(SubmittedJob).map((r) => ({ ...r, job: { ...valid, [r.name]: undefined }, path: r.name })),
      ...requiredFields(SubmittedTask).map((r) => ({
        ...r,
        job: { ...valid, Tasks: [{ ...task, [r.name]: undefined }] },
        path: `Tasks[0].${r.name}`,
      })),
    ];
    expect(fields.map((r) => r.path)).toEqual(["Type", "Tasks", "Tasks[0].Name", "Tasks[0].Engine"]);
    for (const r of fields) {
      const f = findings();
      walkSchema(SubmittedJob, r.job, {}, f);
      expect(text(f), r.path).toEqual([`${r.path}: ${r.message}`]);
    }
    const f = findings();
    walkSchema(SubmittedJob, valid, {}, f);
    expect(f.problems).toEqual([]);
  });

  it("names problems deep in the task and in constraints by their paths", () => {
    const f = findings();
    walkSchema(
      SubmittedJob,
      {
        type: "batch",
        constraints: [{ key: "zone", operator: "=", values: ["a", 1] }],
        tasks: [
          {
            name: "main",
            engine: { type: "docker", params: { image: "busybox", entrypoint: ["sh", 2] } },
            resources: { cpu: true },
            network: { type: "HTTP", domains: ["example.com", "not a domain"] },
            timeouts: { queueTimeout: 1.5 },
          },
        ],
      },
      {},
      f,
    );
    expect(text(f)).toEqual([
      "Constraints[0].Values[1]: must be a string",
      "Tasks[0].Engine.Params.Entrypoint[1]: must be a string",
      "Tasks[0].Resources.CPU: must be a string: cores such as 0.5 or 2, or millicores such as 500m",
      'Tasks[0].Network.Domains[1]: invalid domain "not a domain"',
      "Tasks[0].Timeouts.QueueTimeout: must be a whole number",
    ]);
  });
});
