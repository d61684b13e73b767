import { Schema } from "effect";
import { badRequest, ShoalError } from "../../errors/shoal-error.ts";
import type { AuditLog } from "../../events/chain/audit-log.ts";
import type { ChainRow } from "../../events/chain/verify-chain.ts";
import { DecimalInteger } from "../decimal-integer.ts";
import { defineRoute, type AnyRoute } from "../route.ts";

export const AUDIT_GENESIS_PATH = "/api/v1/orchestrator/audit/genesis";
export const AUDIT_CHAIN_PATH = "/api/v1/orchestrator/audit/chain";
export const AUDIT_CHECKPOINTS_PATH = "/api/v1/orchestrator/audit/checkpoints";
const NDJSON = "application/x-ndjson";
export const MAX_CHAIN_PAGE = 10_000;
export const DEFAULT_CHAIN_PAGE = 1000;
export const MAX_CHECKPOINT_PAGE = 1000;

const Position = Schema.String.pipe(
  Schema.pattern(/^[0-9]{1,15}$/, { message: () => "after must be a position: a whole number in decimal digits" }),
);

export const AuditChainQuery = Schema.Struct({
  after: Schema.optional(Position),
  limit: Schema.optional(DecimalInteger(1, MAX_CHAIN_PAGE)),
});
export const AuditCheckpointsQuery = Schema.Struct({
  after: Schema.optional(Position),
  limit: Schema.optional(DecimalInteger(1, MAX_CHECKPOINT_PAGE)),
});

export const AuditGenesisJson = Schema.Struct({
  AfterPosition: Schema.Number,
  Link: Schema.String,
  Events: Schema.Number,
  CreatedAt: Schema.String,
  Head: Schema.Number,
});

/** A stored event as the chain links it: its stored texts (data and metadata as the JSON text stored) and its link. */
export const ChainRowJson = Schema.Struct({
  position: Schema.Number,
  id: Schema.String,
  stream: Schema.String,
  revision: Schema.Number,
  type: Schema.String,
  time: Schema.String,
  data: Schema.String,
  metadata: Schema.String,
  link: Schema.NullOr(Schema.String),
});

export const AuditCheckpointJson = Schema.Struct({
  position: Schema.Number,
  link: Schema.String,
  time: Schema.String,
  keyId: Schema.String,
  publicKey: Schema.String,
  signature: Schema.String,
});
export const AuditCheckpointsResponse = Schema.Struct({
  Items: Schema.Array(AuditCheckpointJson),
  NextToken: Schema.String,
});

const rowLine = (r: ChainRow): string =>
  `${JSON.stringify({
    position: r.position,
    id: r.id,
    stream: r.stream,
    revision: r.revision,
    type: r.type,
    time: r.time,
    data: r.data,
    metadata: r.metadata,
    link: r.link === null ? null : Buffer.from(r.link).toString("hex"),
  })}\n`;

const NO_CHAIN = new ShoalError({
  kind: "NotImplemented",
  message:
    "this orchestrator's event store (EventStoreDB) keeps no hash chain; the chain, its checkpoints and " +
    "shoal audit verify need the SQLite store",
});

function chainOf(log: AuditLog | undefined): AuditLog {
  if (log === undefined) throw NO_CHAIN;
  return log;
}

async function checkedAfter(log: AuditLog, after: string | undefined): Promise<number> {
  const position = after === undefined ? 0 : Number(after);
  const head = (await log.chainHead()).position;
  if (position > head)
    throw badRequest(`query parameter after: position ${position} is beyond the newest event (${head})`, {
      field: "after",
    });
  return position;
}

/**
 * The hash chain, handed over for a verification made elsewhere (`shoal audit verify` recomputes
 * every link on the auditor's machine; docs/audit.md). `read:history`, as the feed: the rows
 * name every operator.
 */
export function auditRoutes(log: AuditLog | undefined): AnyRoute[] {
  return [
    defineRoute({
      method: "GET",
      path: AUDIT_GENESIS_PATH,
      operationId: "auditGenesis",
      tags: ["Audit"],
      summary: "Returns where the hash chain starts.",
      capability: "read:history",
      description:
        "Where the hash chain starts: the position its first linked event follows, and the hash (Link, hex) over every event stored before it, with the newest position (Head).",
      responses: { "200": { description: "The chain's genesis", schema: AuditGenesisJson } },
      errors: ["NotImplemented", "Unavailable"],
      handler: async () => {
        const chain = chainOf(log);
        const [genesis, head] = [await chain.chainGenesis(), await chain.chainHead()];
        return {
          AfterPosition: genesis.afterPosition,
          Link: Buffer.from(genesis.link).toString("hex"),
          Events: genesis.events,
          CreatedAt: genesis.createdAt,
          Head: head.position,
        };
      },
    }),
    defineRoute({
      method: "GET",
      path: AUDIT_CHAIN_PATH,
      operationId: "auditChain",
      tags: ["Audit"],
      summary: "Returns stored events with their hash-chain links.",
      capability: "read:history",
      description:
        "Stored events after a position, in store order, as the chain links them: their stored texts and their links (hex), one JSON object a line.",
      query: AuditChainQuery,
      describe: {
        after: "Events after this store position (exclusive); default 0",
        limit: `Events in the answer (default ${DEFAULT_CHAIN_PAGE}, at most ${MAX_CHAIN_PAGE}); fewer: the end of the log`,
      },
      responses: {
        "200": { description: "The events, one a line", contentType: NDJSON, schema: ChainRowJson },
      },
      errors: ["BadRequest", "NotImplemented", "Unavailable"],
      handler: async ({ query }, _request, reply) => {
        const chain = chainOf(log);
        const after = await checkedAfter(chain, query.after);
        const rows = await chain.chainPage(after, query.limit ?? DEFAULT_CHAIN_PAGE);
        reply.header("content-type", `${NDJSON}; charset=utf-8`);
        return reply.send(rows.map(rowLine).join(""));
      },
    }),
    defineRoute({
      method: "GET",
      path: AUDIT_CHECKPOINTS_PATH,
      operationId: "auditCheckpoints",
      tags: ["Audit"],
      summary: "Returns the signed audit checkpoints.",
      capability: "read:history",
      description:
        "The signed checkpoints the orchestrator stored, oldest first, as it published them on shoal.audit.checkpoints.",
      query: AuditCheckpointsQuery,
      describe: {
        after: "Checkpoints after this position (exclusive)",
        limit: `Checkpoints per page (default and at most ${MAX_CHECKPOINT_PAGE})`,
      },
      responses: {
        "200": {
          description: "A page of checkpoints; NextToken is empty at the end",
          schema: AuditCheckpointsResponse,
        },
      },
      errors: ["BadRequest", "NotImplemented", "Unavailable"],
      handler: async ({ query }) => {
        const chain = chainOf(log);
        const limit = query.limit ?? MAX_CHECKPOINT_PAGE;
        const items = await chain.auditCheckpoints(query.after === undefined ? 0 : Number(query.after), limit);
        return { Items: items, NextToken: items.length < limit ? "" : String(items[items.length - 1]!.position) };
      },
    }),
  ];
}
