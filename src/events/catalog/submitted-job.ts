import { Schema } from "effect";
import { JobType, NetworkType, SelectorOperator } from "./job-spec.ts";

/**
 * A job as a client submits it (Bacalhau's models.Job as `PUT /api/v1/orchestrator/jobs` and
 * `shoal job run` take it): every field optional, the defaults filling what is left out; what it
 * becomes once accepted is `StoredJobSpec`, built from the same parts. Bacalhau's Go decoder
 * ignores fields it does not know and matches names case-insensitively, and so does Shoal's, so
 * each object here allows other properties. The server-owned fields (ID, State, Version, …) are
 * accepted and ignored with a warning, as Bacalhau's SanitizeSubmission does.
 */

const Others = Schema.Record({ key: Schema.String, value: Schema.Unknown });
const Texts = Schema.Array(Schema.String);
const TextMap = Schema.Record({ key: Schema.String, value: Schema.String });
const Whole = Schema.Number.pipe(Schema.int());
const Seconds = Whole.pipe(Schema.nonNegative()).annotations({ description: "seconds; 0 or absent: none" });
const described = <S extends Schema.Schema.Any>(schema: S, description: string) =>
  Schema.optional(schema.annotations({ description }));

/** YAML writes `CPU: 1` as a number; Bacalhau's strings are what is meant. */
const Quantity = Schema.Union(Schema.String, Schema.Number);

export const SubmittedDockerParams = Schema.Struct({
  Image: Schema.String.annotations({ description: "the image reference; required" }),
  Entrypoint: Schema.optional(Texts),
  Parameters: Schema.optional(Texts),
  EnvironmentVariables: described(Texts, "NAME=value items; no name starts with BACALHAU_"),
  WorkingDirectory: described(Schema.String, "an absolute path in the container"),
});

export const SubmittedTask = Schema.Struct(
  {
    Name: Schema.String.annotations({ description: "required" }),
    Engine: Schema.Struct(
      {
        Type: Schema.Literal("docker").annotations({ description: "Shoal runs docker (any case)" }),
        Params: SubmittedDockerParams.annotations({ description: "no other params: a node would not apply them" }),
      },
      Others,
    ),
    Env: described(TextMap, "upper-case names; a value is literal, or env:HOST_VAR for the node to resolve"),
    Meta: Schema.optional(TextMap),
    Resources: Schema.optional(
      Schema.Struct(
        {
          CPU: described(Quantity, "cores such as 0.5 or 2, or millicores such as 500m"),
          Memory: described(Quantity, "bytes with a unit such as 512Mb, 1Gb or 1Gi"),
          Disk: described(Quantity, "bytes with a unit such as 512Mb, 10Gb or 10Gi"),
          GPU: described(Quantity, "a whole number of GPUs such as 1"),
        },
        Others,
      ),
    ),
    Network: Schema.optional(
      Schema.Struct(
        {
          Type: described(
            Schema.Union(NetworkType, Whole),
            "one of Default, None, Host, Full, HTTP, Bridge (any case), or its number; absent: Default",
          ),
          Domains: described(Texts, "HTTP mode only"),
        },
        Others,
      ),
    ),
    Timeouts: Schema.optional(
      Schema.Struct(
        {
          ExecutionTimeout: Schema.optional(Seconds),
          QueueTimeout: Schema.optional(Seconds),
          TotalTimeout: Schema.optional(Seconds),
        },
        Others,
      ),
    ),
  },
  Others,
);

export const SubmittedJob = Schema.Struct(
  {
    Type: JobType,
    Name: described(Schema.String, "absent: the job's ID"),
    Namespace: described(Schema.String, "absent: default"),
    Priority: described(Whole, "absent or 0: the type's JobDefaults.<Type>.Priority"),
    Count: described(
      Whole.pipe(Schema.nonNegative()),
      "replicas of a batch or service job (absent: 1); ops, daemon: 0 or 1",
    ),
    Constraints: Schema.optional(
      Schema.Array(
        Schema.Struct({ Key: Schema.String, Operator: SelectorOperator, Values: Schema.optional(Texts) }, Others),
      ),
    ),
    Labels: Schema.optional(TextMap),
    Meta: described(TextMap, "keys starting bacalhau.org/ are ignored"),
    Tasks: Schema.Array(SubmittedTask)
      .pipe(Schema.minItems(1), Schema.maxItems(1))
      .annotations({ description: "exactly one task" }),
  },
  Others,
).annotations({ description: "Bacalhau's models.Job" });
