import { Schema } from "effect";

/**
 * The fields Bacalhau's Go client adds to every PUT and DELETE body: its request structs embed
 * apimodels.BasePutRequest and the whole struct is sent as JSON (pkg/publicapi/apimodels/base_requests.go,
 * pkg/publicapi/client/v2/client.go `write`). Bacalhau's server reads none of them from a PUT body
 * but Namespace; Shoal takes them so those clients are not refused. Credential is the Authorization
 * header again and is never read, logged or stored (the header is what authenticates).
 * IdempotencyToken makes a job's submission safe to retry (JobControl.submit); elsewhere it is not
 * acted on, as by Bacalhau's server.
 */
export const BasePutRequestFields = {
  Namespace: Schema.optional(Schema.String.pipe(Schema.maxLength(256))),
  Credential: Schema.optional(
    Schema.Unknown.annotations({
      jsonSchema: { description: "Bacalhau's client repeats the Authorization header here; never read" },
    }),
  ),
  IdempotencyToken: Schema.optional(
    Schema.String.pipe(Schema.maxLength(1024)).annotations({
      description: "PUT /jobs: a retry with the same token answers the first job; elsewhere not acted on",
    }),
  ),
};
