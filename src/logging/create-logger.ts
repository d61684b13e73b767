import { Writable } from "node:stream";
import pino, { type Logger } from "pino";

const LEVELS: Record<number, string> = { 10: "TRACE", 20: "DEBUG", 30: "INFO", 40: "WARN", 50: "ERROR", 60: "FATAL" };
const OMIT = new Set(["level", "time", "msg", "pid", "hostname"]);

/** Human-readable lines ("15:04:05.000 INFO message key=value") for Logging.Mode=default. */
function humanStream(out: NodeJS.WritableStream): Writable {
  return new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split("\n")) {
        if (line === "") continue;
        try {
          const rec = JSON.parse(line) as Record<string, unknown>;
          const time = new Date(rec.time as number).toISOString().slice(11, 23);
          const fields = Object.entries(rec)
            .filter(([k]) => !OMIT.has(k))
            .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
            .join(" ");
          out.write(
            `${time} ${(LEVELS[rec.level as number] ?? "LOG").padEnd(5)} ${String(rec.msg ?? "")}${fields ? ` ${fields}` : ""}\n`,
          );
        } catch {
          out.write(`${line}\n`);
        }
      }
      done();
    },
  });
}

export function createLogger(options: { level: string; mode: string; name?: string }): Logger {
  const base = { level: options.level, base: options.name ? { component: options.name } : {} };
  // Logs go to stderr so that command output on stdout stays machine-readable.
  return options.mode === "json" ? pino(base, pino.destination(2)) : pino(base, humanStream(process.stderr));
}
