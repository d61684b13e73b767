import type { ProcessorProgress } from "./processor.ts";

/**
 * Waits for a read model to reach `position` for as long as it keeps moving: a long replay of a big store is never cut
 * short by a fixed bound, while a lane that folds nothing for `stallMs` (a wedged handler, a store that stopped
 * answering) stops the wait with the lane's own error.
 */
export async function catchUp(lane: ProcessorProgress, position: number, stallMs: number): Promise<void> {
  for (;;) {
    const from = lane.position;
    try {
      return await lane.waitFor(position, stallMs);
    } catch (err) {
      if (lane.position <= from) throw err;
    }
  }
}
