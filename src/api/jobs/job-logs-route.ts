import { Readable } from "node:stream";
import { Schema } from "effect";
import type { WebSocket } from "ws";
import { asShoalError, badRequest } from "../../errors/shoal-error.ts";
import { MAX_TAIL_LINES } from "../../transport/log-messages.ts";
import { DecimalInteger } from "../decimal-integer.ts";
import { QueryBool, isGoTrue } from "../query-bool.ts";
import { defineRoute, type AnyRoute } from "../route.ts";
import type { JobLogs, JobLogsRead } from "./job-logs.ts";
import type { ExecutionLog } from "./log-lines.ts";

export const JOB_LOGS_PATH = "/api/v1/orchestrator/jobs/:id/logs";

const Tail = Schema.String.pipe(
  Schema.pattern(/^(t|T|TRUE|true|True|f|F|FALSE|false|False|[0-9]{1,5})?$/, {
    message: () =>
      `tail must be true (only what comes from now on), false (everything) or a number of lines from 0 to ${MAX_TAIL_LINES} (the last ones)`,
  }),
);

export const JobLogsQuery = Schema.Struct({
  execution_id: Schema.optional(Schema.String.pipe(Schema.maxLength(256))),
  tail: Schema.optional(Tail),
  follow: Schema.optional(QueryBool),
  job_version: Schema.optional(DecimalInteger(0, 999_999_999_999)),
  all_job_versions: Schema.optional(QueryBool),
});
const IdParams = Schema.Struct({ id: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(256)) });

/** Bacalhau's models.ExecutionLog. */
export const ExecutionLogJson = Schema.Struct({ Type: Schema.Literal(1, 2), Line: Schema.String });
/**
 * One message, as Bacalhau's concurrency.AsyncResult[models.ExecutionLog] marshals it: `value`
 * always, `error` when the stream ends in one (then `value` is the empty log, Type 0).
 */
export const LogMessageJson = Schema.Struct({
  value: Schema.Struct({ Type: Schema.Literal(0, 1, 2), Line: Schema.String }),
  error: Schema.optional(Schema.String),
});

/**
 * The query's read, or a 400 naming what is wrong. A bare `tail` (a Go bool spelling) is Bacalhau's; a number is
 * Shoal's last N lines.
 */
export function logsReadOf(query: typeof JobLogsQuery.Type): Omit<JobLogsRead, "signal"> {
  const follow = query.follow === true;
  const tail = query.tail ?? "";
  if (tail === "") return { follow };
  if (!/^[0-9]+$/.test(tail)) return isGoTrue(tail) ? { follow, tailLines: 0 } : { follow };
  const lines = Number(tail);
  if (lines > MAX_TAIL_LINES) throw badRequest(`query parameter tail: at most ${MAX_TAIL_LINES} lines, got ${lines}`);
  return { follow, tailLines: lines };
}

const valueMessage = (log: ExecutionLog): string => JSON.stringify({ value: log });
const errorMessage = (e: unknown): string =>
  JSON.stringify({ value: { Type: 0, Line: "" }, error: asShoalError(e).message });

function sent(socket: WebSocket, data: string): Promise<void> {
  return new Promise((resolve, reject) => socket.send(data, (err) => (err ? reject(err) : resolve())));
}

/**
 * `GET /api/v1/orchestrator/jobs/{id}/logs`: with `Upgrade: websocket`, Bacalhau's log stream
 * (one message per line, then a normal close); without, the same messages as NDJSON, streamed
 * (with `follow`, until the execution ends). docs/jobs.md, Logs.
 */
export function jobLogsRoute(logs: JobLogs): AnyRoute {
  const open = (id: string, query: typeof JobLogsQuery.Type) => {
    const read = logsReadOf(query);
    const execution = logs.select(id, {
      executionId: query.execution_id || undefined,
      jobVersion: query.job_version,
    });
    return { read, execution };
  };
  return defineRoute({
    method: "GET",
    path: JOB_LOGS_PATH,
    operationId: "orchestrator/logs",
    tags: ["Jobs"],
    summary: "Streams the logs of a job's execution.",
    capability: "read:job",
    description:
      "An execution's output, line by line: the one `execution_id` names, else the latest of the job's version " +
      "asked for (`job_version`), else the latest of every version's, as Bacalhau picks it. As a WebSocket " +
      "(Bacalhau's log stream), or without the upgrade as NDJSON, one message per line. `follow` keeps it open " +
      "until the execution ends. A job or version with no execution yet is a 409.",
    params: IdParams,
    query: JobLogsQuery,
    describe: {
      id: "Job id (j-<uuid>)",
      execution_id:
        "Read this execution of the job (its id, or a unique prefix such as the short e-<8 hex>), of any version " +
        "unless job_version is given (default: the latest)",
      job_version: "The job's version whose latest execution is read (0 or absent: every version's)",
      all_job_versions: "Accepted as on the other job routes; the logs pick among every version's by default",
      tail: "true: only what comes from now on (Bacalhau's); a number N: the last N lines first; false or absent: everything",
      follow: "Keep streaming until the execution ends",
    },
    responses: {
      "200": {
        description:
          "NDJSON: one `{value: {Type, Line}}` per line (Type 1 stdout, 2 stderr), `{value, error}` if the stream fails",
        schema: LogMessageJson,
        contentType: "application/x-ndjson",
      },
    },
    errors: ["BadRequest", "NotFound", "Conflict", "Unavailable"],
    handler: async ({ params, query }, request, reply) => {
      const { read, execution } = open(params.id, query);
      const abort = new AbortController();
      let ended = () => {};
      void logs.track(new Promise<void>((resolve) => (ended = resolve)));
      reply.raw.once("close", () => {
        abort.abort();
        ended();
      });
      async function* ndjson(): AsyncGenerator<string> {
        try {
          for await (const line of logs.lines(execution, { ...read, signal: abort.signal }))
            yield `${valueMessage(line)}\n`;
        } catch (e) {
          request.log.warn({ err: e, executionId: execution.executionId }, "log stream failed");
          yield `${errorMessage(e)}\n`;
        } finally {
          abort.abort();
          ended();
        }
      }
      reply.header("content-type", "application/x-ndjson; charset=utf-8");
      return reply.send(Readable.from(ndjson(), { objectMode: false }));
    },
    websocket: ({ params, query }, request) => {
      const { read, execution } = open(params.id, query);
      return (socket) => logs.track(session(socket));
      async function session(socket: WebSocket): Promise<void> {
        const abort = new AbortController();
        socket.once("close", () => abort.abort());
        try {
          for await (const line of logs.lines(execution, { ...read, signal: abort.signal })) {
            if (socket.readyState !== socket.OPEN) break;
            // Sent before the next line is read: a slow client slows the read, nothing piles up here.
            await sent(socket, valueMessage(line));
          }
        } catch (e) {
          request.log.warn({ err: e, executionId: execution.executionId }, "log stream failed");
          if (socket.readyState === socket.OPEN) await sent(socket, errorMessage(e)).catch(() => undefined);
        } finally {
          abort.abort();
          if (socket.readyState === socket.OPEN) socket.close(1000);
        }
      }
    },
  });
}
