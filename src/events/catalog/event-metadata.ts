import { Schema } from "effect";

/**
 * Who may cause an event: an authenticated REST user, a compute node, the orchestrator itself, or one of its
 * workflows. Events stored before workflows had their own type say `system` with the id `workflow-<name>`; they
 * decode as they are.
 */
export const ActorType = Schema.Literal("operator", "node", "system", "workflow");

/** Who caused an event, why, and how it relates to other messages. On every stored event. */
export const EventMetadata = Schema.Struct({
  time: Schema.String,
  actor: Schema.Struct({ type: ActorType, id: Schema.String }),
  reason: Schema.optional(Schema.String),
  correlationId: Schema.String,
  causationId: Schema.String,
  schemaVersion: Schema.Number.pipe(Schema.int(), Schema.positive()),
  /**
   * Among several orchestrators: the partition the writer owned and its lease's epoch (the key-value revision that
   * created the lease; a later owner's is always higher).
   */
  lease: Schema.optional(
    Schema.Struct({
      partition: Schema.Number.pipe(Schema.int(), Schema.nonNegative()),
      epoch: Schema.Number.pipe(Schema.int(), Schema.positive()),
    }),
  ),
});
export type EventMetadata = typeof EventMetadata.Type;
export type Actor = EventMetadata["actor"];
export type Lease = NonNullable<EventMetadata["lease"]>;
