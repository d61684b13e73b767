import { Schema } from "effect";

export const ActorType = Schema.Literal("operator", "node", "system");

/** Who caused an event, why, and how it relates to other messages. On every stored event. */
export const EventMetadata = Schema.Struct({
  time: Schema.String,
  actor: Schema.Struct({ type: ActorType, id: Schema.String }),
  reason: Schema.optional(Schema.String),
  correlationId: Schema.String,
  causationId: Schema.String,
  schemaVersion: Schema.Number.pipe(Schema.int(), Schema.positive()),
});
export type EventMetadata = typeof EventMetadata.Type;
export type Actor = EventMetadata["actor"];
