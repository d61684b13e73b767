import { Context, Effect, Layer } from "effect";
import type { Logger } from "pino";
import { defaultConfig } from "../../../src/config/keys.ts";
import { Store, storeLayer } from "../../../src/orchestrator/services.ts";
import { silentLogger } from "../fixtures.ts";

/** The orchestrator's start-up with EventStore.URL=`url` (its store layer, checks and all): the head position. */
export const startStore = (url: string, logger: Logger = silentLogger): Promise<number> =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const store = yield* Layer.build(storeLayer({ ...defaultConfig(), "EventStore.URL": url }, logger));
        return yield* Effect.promise(() => Context.get(store, Store).headPosition());
      }),
    ),
  );
