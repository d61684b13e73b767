import { ApiError, type ApiClient } from "./api-client.ts";
import { ndjsonLines, openNdjson } from "./ndjson-request.ts";
import { printable } from "./printable.ts";

export interface JobLogsOptions {
  readonly executionId?: string | undefined;
  /** The job's version whose latest execution is read (absent: the current one). */
  readonly jobVersion?: number | undefined;
  readonly tail?: string | undefined;
  readonly follow: boolean;
  /** The output as the job wrote it, control characters and all. */
  readonly raw: boolean;
}

/** One message of the logs route's NDJSON: Bacalhau's AsyncResult[models.ExecutionLog]. */
interface LogMessage {
  readonly value?: { readonly Type?: number; readonly Line?: string };
  readonly error?: string;
}

const write = (stream: NodeJS.WriteStream, text: string): Promise<void> =>
  new Promise((resolve) => (stream.write(text) ? resolve() : stream.once("drain", resolve)));

/**
 * Prints a job's output from the logs route's NDJSON (docs/jobs.md, Logs) as it comes, stdout's to stdout and
 * stderr's to stderr, made printable as every other command's output (a job's output is anyone's text) unless `raw`.
 * Returns at the end of the stream; an error the server sends (in the stream or as an HTTP error) is thrown as an
 * ApiError. Make a request with `api` first: the stream goes with the credential that one was accepted with.
 */
export async function printJobLogs(api: ApiClient, jobId: string, options: JobLogsOptions): Promise<void> {
  const query = new URLSearchParams();
  if (options.executionId) query.set("execution_id", options.executionId);
  if (options.jobVersion !== undefined) query.set("job_version", String(options.jobVersion));
  if (options.tail !== undefined) query.set("tail", options.tail);
  if (options.follow) query.set("follow", "true");
  const response = await openNdjson(api, `/api/v1/orchestrator/jobs/${encodeURIComponent(jobId)}/logs?${query}`);
  for await (const text of ndjsonLines(response)) {
    const message = JSON.parse(text) as LogMessage;
    if (message.error)
      throw new ApiError(
        200,
        `the log stream ended in an error: ${printable(message.error, { multiline: true })}`,
        message,
      );
    const line = options.raw ? (message.value?.Line ?? "") : printable(message.value?.Line ?? "", { multiline: true });
    await write(message.value?.Type === 2 ? process.stderr : process.stdout, line);
  }
}
