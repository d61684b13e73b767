import { FULL_BUCKET, type Disruption, type EvictionBucket } from "./eviction-rule.ts";

/** A silent node waiting its turn: why it waits, the node event that made it wait, and the record that queued it. */
export interface WaitingNode {
  readonly nodeId: string;
  readonly reason: string;
  /** The node event it waits for ("" when the periodic check found it: no one event says why). */
  readonly causationId: string;
  readonly correlationId: string;
  /** The id of what queued it (the step's command, or the check's record): its settlement's id derives from it. */
  readonly queuedBy: string;
}

/**
 * The node reactions' own state. The queue and the bucket are folded from the workflow's stream
 * (`workflow-node-reactions`), so a restart finds them as they were; the grace, the last
 * disruption and the next look are the running orchestrator's own and start afresh with it.
 */
export interface ReactionsState {
  /** Insertion-ordered: the order nodes started waiting (first come, first go). */
  readonly waiting: ReadonlyMap<string, WaitingNode>;
  readonly bucket: EvictionBucket;
  /** Until this instant nothing moves for silence (a start, the transport's return). */
  readonly graceUntil: number | undefined;
  /** The disruption the last look found (a change is logged). */
  readonly disruption: Disruption;
  /** When the reactions want to look at the queue again; undefined while nothing waits. */
  readonly nextLookAt: number | undefined;
}

/** Nothing waits; the bucket is full (its instant does not matter while it holds its one token). */
export const initialReactionsState = (): ReactionsState => ({
  waiting: new Map(),
  bucket: FULL_BUCKET(0),
  graceUntil: undefined,
  disruption: "normal",
  nextLookAt: undefined,
});
