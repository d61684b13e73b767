import { Writable } from "node:stream";
import pino, { type Logger } from "pino";

export interface LogRecord {
  readonly level: number;
  readonly msg: string;
  readonly [key: string]: unknown;
}

/** A real pino logger whose records a test can read back (what an operator would see in the log). */
export function capturedLogger(): { logger: Logger; records: LogRecord[]; messages: (text: string) => LogRecord[] } {
  const records: LogRecord[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split("\n"))
        if (line.trim() !== "") records.push(JSON.parse(line) as LogRecord);
      done();
    },
  });
  const logger = pino({ level: "debug" }, stream);
  return { logger, records, messages: (text) => records.filter((r) => r.msg.includes(text)) };
}
