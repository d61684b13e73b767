import type { Processor, ProcessorProgress } from "../projections/processor.ts";
import { READ_YOUR_WRITES_TIMEOUT_MS } from "./read-your-writes-timeout.ts";

/**
 * A processor (a workflow whose react reads a read model) that handles each batch only once the read model has folded
 * it: read-your-writes across lanes, so what it reads of the store is at least as new as the event it reacts to. A
 * read model that does not get there in time fails the batch, which its host delivers again.
 */
export function afterReadModel(
  processor: Processor,
  readModel: Pick<ProcessorProgress, "name" | "waitFor">,
  timeoutMs = READ_YOUR_WRITES_TIMEOUT_MS,
): Processor {
  return {
    name: processor.name,
    ...(processor.checkpoints === undefined ? {} : { checkpoints: processor.checkpoints }),
    handle: async (batch) => {
      await readModel.waitFor(batch.at(-1)?.recorded.position, timeoutMs);
      await processor.handle(batch);
    },
    ...(processor.trackCompletion === undefined ? {} : { trackCompletion: (r) => processor.trackCompletion?.(r) }),
    ...(processor.restarted === undefined ? {} : { restarted: () => processor.restarted?.() }),
    ...(processor.flush === undefined ? {} : { flush: () => processor.flush?.() ?? Promise.resolve() }),
  };
}
