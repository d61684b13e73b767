import { describe, expect, it } from "vitest";
import { RefusalLog } from "../../../src/logging/refusal-log.ts";
import { capturedLogger } from "../../support/captured-logger.ts";

describe("RefusalLog", () => {
  it("logs a kind of refusal once per interval, and the next line says how many were not logged", () => {
    const { logger, records } = capturedLogger();
    let now = 0;
    const log = new RefusalLog(logger, 1000, () => now);
    for (let i = 0; i < 500; i++) log.warn("compute request refused", "BadRequest", () => ({ subject: `s.${i}` }));
    log.warn("compute request refused", "NotFound", () => ({ subject: "s.nf" }));
    now = 999;
    log.warn("compute request refused", "BadRequest", () => ({ subject: "s.late" }));
    now = 1500;
    log.warn("compute request refused", "BadRequest", () => ({ subject: "s.next" }));
    expect(
      records.map(({ msg, kind, subject, notLogged, sinceMs }) => ({ msg, kind, subject, notLogged, sinceMs })),
    ).toEqual([
      { msg: "compute request refused", kind: "BadRequest", subject: "s.0", notLogged: undefined, sinceMs: undefined },
      { msg: "compute request refused", kind: "NotFound", subject: "s.nf", notLogged: undefined, sinceMs: undefined },
      { msg: "compute request refused", kind: "BadRequest", subject: "s.next", notLogged: 500, sinceMs: 1500 },
    ]);
    expect(log.size).toBe(2);
  });
});
