import { Schema } from "effect";
import { ActorType } from "../events/catalog/event-metadata.ts";
import { ERROR_KINDS } from "../errors/shoal-error.ts";
import { decode, encodeMessage } from "../transport/codec.ts";

/**
 * A write one orchestrator received (over REST) and hands to the entity's owner: the command by name, its arguments
 * (checked by the command's own schema on arrival), and what the receiving orchestrator established about the request
 * (the authenticated actor, the reason, the correlation and causation ids), so the owner's events say who really
 * asked. ExpectedRevision is the caller's If-Match.
 */
export const ForwardedCommand = Schema.Struct({
  Command: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64)),
  Entity: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(256)),
  Args: Schema.Unknown,
  /** The node id of the orchestrator that received the request, for the owner's log. */
  From: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(256)),
  Actor: Schema.Struct({ Type: ActorType, ID: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(256)) }),
  Reason: Schema.optional(Schema.String.pipe(Schema.maxLength(1024))),
  CorrelationID: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(256)),
  CausationID: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(256)),
  ExpectedRevision: Schema.optional(Schema.Number.pipe(Schema.int(), Schema.greaterThanOrEqualTo(-1))),
});
export type ForwardedCommand = typeof ForwardedCommand.Type;

const Position = Schema.Number.pipe(Schema.int(), Schema.nonNegative());

/** The owner's answer: what it stored (the receiver waits for its own read model to reach Position), or its refusal. */
export const ForwardedAnswer = Schema.Union(
  Schema.Struct({
    Done: Schema.Struct({
      Position: Schema.optional(Position),
      Revision: Schema.optional(Schema.Number.pipe(Schema.int(), Schema.greaterThanOrEqualTo(-1))),
      Note: Schema.optional(Schema.String),
      Changed: Schema.Boolean,
    }),
  }),
  Schema.Struct({
    Refused: Schema.Struct({
      Kind: Schema.Literal(...ERROR_KINDS),
      Message: Schema.String,
      Hint: Schema.optional(Schema.String),
      Details: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
      RetryAfter: Schema.optional(Schema.Number.pipe(Schema.int(), Schema.positive())),
    }),
  }),
);
export type ForwardedAnswer = typeof ForwardedAnswer.Type;

export const encodeForwardedCommand = (command: ForwardedCommand): Uint8Array => encodeMessage(command);
/** Unknown fields, wrong types and garbage are refused (ProtocolError), naming what is wrong. */
export const decodeForwardedCommand = (bytes: Uint8Array): ForwardedCommand => decode(ForwardedCommand, bytes);
export const encodeForwardedAnswer = (answer: ForwardedAnswer): Uint8Array => encodeMessage(answer);
export const decodeForwardedAnswer = (bytes: Uint8Array): ForwardedAnswer => decode(ForwardedAnswer, bytes);
