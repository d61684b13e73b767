import {
  AccessDeniedError,
  CancelledError,
  DeadlineExceededError,
  InvalidArgumentError,
  MaxAppendSizeExceededError,
  NotLeaderError,
  StreamDeletedError,
  TimeoutError,
  UnavailableError,
  UnknownError,
  convertToCommandError,
} from "@kurrent/kurrentdb-client";
import { Metadata } from "@grpc/grpc-js";
import { describe, expect, it } from "vitest";
import { esdbStoreError } from "../../../src/events/eventstoredb/esdb-store-error.ts";
import { StoreUnavailableError, WrongExpectedRevisionError } from "../../../src/events/store/store-errors.ts";
import { asShoalError } from "../../../src/errors/shoal-error.ts";

/** A gRPC failure as @grpc/grpc-js hands it to the client (status code, details, trailers). */
function grpcFailure(code: number, details: string, trailers: Record<string, string> = {}): Error {
  const metadata = new Metadata();
  for (const [key, value] of Object.entries(trailers)) metadata.set(key, value);
  return Object.assign(new Error(`${code} ${details}`), { code, details, metadata });
}

// @grpc/grpc-js status codes.
const CANCELLED = 1;
const DEADLINE_EXCEEDED = 4;
const ABORTED = 10;
const UNAVAILABLE = 14;
const UNAUTHENTICATED = 16;

describe("KurrentDB client errors", () => {
  it("become StoreUnavailableError (503, retried) only when the server is away or busy", () => {
    const transient = [
      new UnavailableError(undefined, "No connection established"),
      new DeadlineExceededError(undefined, "Deadline exceeded"),
      new CancelledError(undefined, "Cancelled on server"),
      new TimeoutError(undefined, "Operation timed out"),
      convertToCommandError(grpcFailure(UNAVAILABLE, "No connection established")),
      convertToCommandError(grpcFailure(DEADLINE_EXCEEDED, "Deadline exceeded")),
      convertToCommandError(grpcFailure(CANCELLED, "Cancelled on server")),
      convertToCommandError(grpcFailure(ABORTED, "timed out")),
      convertToCommandError(
        grpcFailure(UNAVAILABLE, "Leader info available", {
          exception: "not-leader",
          "leader-endpoint-host": "db-2",
          "leader-endpoint-port": "2113",
        }),
      ),
      // The same statuses passed on by the client as grpc-js gave them.
      grpcFailure(UNAVAILABLE, "Connection dropped"),
      grpcFailure(DEADLINE_EXCEEDED, "Deadline exceeded"),
      Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:2113"), { code: "ECONNREFUSED" }),
      Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }),
      new Error("Failed to discover after 10 attempts."),
      // A leader election, as the client reports the server's BatchAppend answer.
      new UnknownError(undefined, "Could not recognize Server Is Not Ready"),
      new UnknownError(undefined, "Could not recognize Server Is Busy"),
      new UnknownError(undefined, "Could not recognize No leader info available in response"),
    ];
    expect(transient[8]).toBeInstanceOf(NotLeaderError);
    for (const e of transient) {
      const mapped = esdbStoreError(e);
      expect(mapped, (e as Error).message).toBeInstanceOf(StoreUnavailableError);
      expect(asShoalError(mapped)).toMatchObject({
        kind: "Unavailable",
        retryAfterSeconds: 5,
        message: expect.stringContaining((e as Error).message),
      });
    }
  });

  it("are rethrown as they are, and surface as Internal, when a retry would be refused the same way", () => {
    const permanent = [
      new AccessDeniedError(undefined, "Access denied"),
      convertToCommandError(grpcFailure(UNAUTHENTICATED, "Bad credentials")),
      grpcFailure(UNAUTHENTICATED, "Bad credentials"),
      new InvalidArgumentError("Invalid argument"),
      MaxAppendSizeExceededError.fromMaxAppendSize(1048576),
      StreamDeletedError.fromStreamName("node-a"),
      new UnknownError(undefined, "Internal server error"),
      new TypeError("Cannot read properties of undefined"),
    ];
    expect(permanent[1]).toBeInstanceOf(AccessDeniedError); // the client converts UNAUTHENTICATED so
    for (const e of permanent) {
      expect(esdbStoreError(e), (e as Error).message).toBe(e);
      expect(asShoalError(e)).toMatchObject({ kind: "Internal" });
    }
  });

  it("keeps Shoal's own store errors", () => {
    const conflict = new WrongExpectedRevisionError({ stream: "node-a", expected: 1, actual: 2 });
    const away = new StoreUnavailableError({ reason: "gone" });
    expect(esdbStoreError(conflict)).toBe(conflict);
    expect(esdbStoreError(away)).toBe(away);
  });
});
