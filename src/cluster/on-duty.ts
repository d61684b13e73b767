import type { EventEnvelope } from "../projections/event-envelope.ts";
import type { Processor } from "../projections/processor.ts";
import type { DutyGate } from "./duty-gate.ts";

/**
 * The processor, run only while this orchestrator holds the duty. Until then its next batch waits; once the duty is
 * taken, it goes on from the checkpoint the last holder saved (what that holder handled is not handled again), as a
 * restart would. Its checkpoint is saved only while the duty is held, so a former holder never moves it back.
 */
export function onDuty(processor: Processor, gate: DutyGate): Processor {
  if (gate.always) return processor;
  const inner = processor.checkpoints;
  let handledThrough = 0;
  let waiting: AbortController | undefined;
  const checkpoints = inner && {
    load: (name: string) => inner.load(name),
    save: (name: string, position: number) => (gate.held ? inner.save(name, position) : Promise.resolve()),
  };
  return {
    name: processor.name,
    ...(checkpoints ? { checkpoints } : {}),
    async handle(batch: readonly EventEnvelope[]) {
      if (!gate.held) {
        waiting = new AbortController();
        try {
          await gate.whenHeld(waiting.signal);
        } finally {
          waiting = undefined;
        }
        handledThrough = (await inner?.load(processor.name)) ?? 0;
        // Another holder may have written meanwhile what the processor keeps of the store.
        processor.restarted?.();
      }
      const first = batch[0];
      const rest = first && first.position > handledThrough ? batch : batch.filter((e) => e.position > handledThrough);
      if (rest.length > 0) await processor.handle(rest);
    },
    ...(processor.trackCompletion ? { trackCompletion: processor.trackCompletion.bind(processor) } : {}),
    flush: async () => {
      // A stop: a batch waiting for the duty gives up (the host does not deliver it again once stopped).
      waiting?.abort();
      await processor.flush?.();
    },
  };
}
