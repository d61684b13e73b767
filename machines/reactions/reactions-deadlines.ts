import type { Deadline } from "../decider.ts";
import type { ReactionsState } from "./reactions-state.ts";

/** A look the reactions want at an instant: the host gives it the fleet's health then. */
export interface LookRequest {
  readonly type: "Look";
}

/** The next instant the reactions want to look at the queue: a waiting node's turn, a grace's end, a paused recheck. */
export function reactionsDeadlines(state: ReactionsState): readonly Deadline<LookRequest>[] {
  return state.nextLookAt === undefined || state.waiting.size === 0
    ? []
    : [{ name: "look", at: state.nextLookAt, command: { type: "Look" } }];
}
