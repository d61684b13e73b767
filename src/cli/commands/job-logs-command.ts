import type { IncomingMessage } from "node:http";
import { parseArgs } from "node:util";
import { ApiError, type ApiClient } from "../api-client.ts";
import { API_OPTIONS, apiClientFrom } from "../api-client-from-flags.ts";
import { CONFIG_OPTIONS } from "../config-flags.ts";
import { oneJobId } from "../one-job-id.ts";
import { printable } from "../printable.ts";
import { UsageError } from "../usage-error.ts";

export const JOB_LOGS_HELP = `Usage: shoal job logs <job-id> [options]

Prints a job's output, line by line: stdout to stdout, stderr to stderr. The job's latest
execution unless --execution-id names another. Without --follow: what it wrote so far (a finished
execution: what its node reported); with it, lines as they come, until the execution ends.
Control characters the job wrote (terminal escape sequences, carriage returns, …) are shown as
\\uXXXX, so that a job cannot clear or rewrite your terminal; newlines and tabs are kept.

Options:
  -e, --execution-id ID    read this execution of the job
  -t, --tail N             only the last N lines so far (0: only what comes from now on)
  -f, --follow             keep printing until the execution ends
  --raw                    write the output as the job wrote it, control characters and all
  --api-host, --api-port, --api-key, --username, --password   as for \`shoal node\``;

const OPTIONS = {
  ...CONFIG_OPTIONS,
  ...API_OPTIONS,
  "execution-id": { type: "string", short: "e" },
  tail: { type: "string", short: "t" },
  follow: { type: "boolean", short: "f" },
  raw: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

/** One message of the logs route's NDJSON: Bacalhau's AsyncResult[models.ExecutionLog]. */
interface LogMessage {
  readonly value?: { readonly Type?: number; readonly Line?: string };
  readonly error?: string;
}

async function open(api: ApiClient, path: string): Promise<IncomingMessage> {
  const target = new URL(`${api.baseUrl}${path}`);
  const { request } = target.protocol === "https:" ? await import("node:https") : await import("node:http");
  const authorization = api.acceptedAuthorization;
  try {
    return await new Promise<IncomingMessage>((resolve, reject) => {
      const req = request(
        target,
        {
          method: "GET",
          headers: { accept: "application/x-ndjson", ...(authorization === undefined ? {} : { authorization }) },
        },
        resolve,
      );
      req.once("error", reject);
      req.end();
    });
  } catch (e) {
    throw new ApiError(0, `cannot reach the Shoal API at ${api.baseUrl}: ${(e as Error).message}`, undefined);
  }
}

async function refusal(response: IncomingMessage): Promise<ApiError> {
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  let body: unknown;
  try {
    body = text === "" ? undefined : JSON.parse(text);
  } catch {
    body = text;
  }
  const message = (body as { Message?: string } | undefined)?.Message ?? `HTTP ${response.statusCode}`;
  return new ApiError(response.statusCode ?? 0, message, body);
}

const write = (stream: NodeJS.WriteStream, text: string): Promise<void> =>
  new Promise((resolve) => (stream.write(text) ? resolve() : stream.once("drain", resolve)));

/**
 * `shoal job logs JOB_ID [--execution-id ID] [--tail N] [-f|--follow] [--raw]`: reads the logs
 * route without the WebSocket upgrade (its NDJSON, streamed; docs/jobs.md, Logs) and prints each
 * line as it comes, stdout's to stdout and stderr's to stderr, made printable as every other
 * command's output (a job's output is anyone's text), or with --raw as the job wrote it. 0 at the
 * end of the stream; an error the server sends (in the stream or as an HTTP error) is thrown as an
 * ApiError.
 */
export async function jobLogsCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true });
  if (values.help) {
    console.log(JOB_LOGS_HELP);
    return 0;
  }
  const jobId = oneJobId(positionals, "logs");
  if (values.tail !== undefined && !/^[0-9]{1,5}$/.test(values.tail))
    throw new UsageError(`--tail must be a number of lines, got ${values.tail}`);
  const api = apiClientFrom(values);
  const query = new URLSearchParams();
  if (values["execution-id"]) query.set("execution_id", values["execution-id"]);
  if (values.tail !== undefined) query.set("tail", values.tail);
  if (values.follow) query.set("follow", "true");
  const jobPath = `/api/v1/orchestrator/jobs/${encodeURIComponent(jobId)}`;
  // Finds the credential the API takes (and says which were tried) and an unknown job, before the stream.
  await api.request("GET", jobPath);
  const response = await open(api, `${jobPath}/logs?${query}`);
  if ((response.statusCode ?? 0) < 200 || (response.statusCode ?? 0) >= 300) throw await refusal(response);
  response.setEncoding("utf8");
  let pending = "";
  const print = async (text: string) => {
    if (text.trim() === "") return;
    const message = JSON.parse(text) as LogMessage;
    if (message.error)
      throw new ApiError(
        200,
        `the log stream ended in an error: ${printable(message.error, { multiline: true })}`,
        message,
      );
    const line = values.raw ? (message.value?.Line ?? "") : printable(message.value?.Line ?? "", { multiline: true });
    await write(message.value?.Type === 2 ? process.stderr : process.stdout, line);
  };
  for await (const piece of response) {
    pending += piece as string;
    let nl = pending.indexOf("\n");
    while (nl !== -1) {
      await print(pending.slice(0, nl));
      pending = pending.slice(nl + 1);
      nl = pending.indexOf("\n");
    }
  }
  await print(pending);
  return 0;
}
