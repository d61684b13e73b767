import { Schema } from "effect";
import { EventMetadata } from "../../events/catalog/event-metadata.ts";

/** A stored event as the API shows it (projections/cluster-event.ts): a node's history, the cluster's feed. */
export const ClusterEventJson = Schema.Struct({
  id: Schema.String,
  type: Schema.String,
  stream: Schema.String,
  revision: Schema.Number.pipe(Schema.int()),
  position: Schema.Number.pipe(Schema.int()),
  time: Schema.String.annotations({ jsonSchema: { type: "string", format: "date-time" } }),
  data: Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({ jsonSchema: { type: "object" } }),
  metadata: EventMetadata,
}).annotations({ identifier: "ClusterEvent" });
