import { Arbitrary, FastCheck, type Schema } from "effect";
import { describe, expect, it } from "vitest";
import { decode, encode } from "../../../src/transport/codec.ts";
import {
  HeartbeatRequest,
  JoinRequest,
  ProtocolResponse,
  UpdateInfoRequest,
  UpdateResourcesRequest,
} from "../../../src/transport/messages.ts";
import {
  AskForBid,
  BidAccepted,
  BidRejected,
  CancelExecution,
  ExecutionCompleted,
  ExecutionFailed,
  ExecutionStarted,
  RunExecution,
} from "../../../src/transport/work-messages.ts";
import { LogBatch } from "../../../src/transport/log-messages.ts";
import { mutate } from "../../support/damaged-json.ts";
import { effectOnlyDecode } from "../../support/effect-only-decode.ts";
import { seededRandom } from "../../support/seeded-random.ts";

const SCHEMAS: Record<string, Schema.Schema<unknown>> = {
  JoinRequest,
  HeartbeatRequest,
  UpdateInfoRequest,
  UpdateResourcesRequest,
  ProtocolResponse,
  AskForBid,
  RunExecution,
  CancelExecution,
  BidAccepted,
  BidRejected,
  ExecutionStarted,
  ExecutionCompleted,
  ExecutionFailed,
  LogBatch,
} as never;

type Outcome = { ok: string } | { error: string };

function outcome(run: () => unknown): Outcome {
  try {
    return { ok: JSON.stringify(run()) };
  } catch (e) {
    return { error: `${(e as Error).name}: ${(e as Error).message}` };
  }
}

describe("decode takes its shortcut past Effect only where Effect would give the message back unchanged", () => {
  for (const [name, schema] of Object.entries(SCHEMAS)) {
    it(`${name}: random valid messages and random damage to them decode as Effect alone decodes them`, () => {
      const index = Object.keys(SCHEMAS).indexOf(name);
      const random = seededRandom(index + 1);
      const samples = FastCheck.sample(Arbitrary.make(schema), { numRuns: 60, seed: 7 + index });
      let accepted = 0;
      let refused = 0;
      for (const sample of samples) {
        for (const input of [sample, ...Array.from({ length: 8 }, () => mutate(sample ?? null, random))]) {
          const bytes = encode(input);
          const expected = outcome(() => effectOnlyDecode(schema, bytes));
          expect(
            outcome(() => decode(schema, bytes)),
            JSON.stringify(input)?.slice(0, 300),
          ).toEqual(expected);
          if ("ok" in expected) accepted++;
          else refused++;
        }
      }
      // Both sides of the comparison were exercised.
      expect(accepted).toBeGreaterThan(40);
      expect(refused).toBeGreaterThan(40);
    });
  }
});
