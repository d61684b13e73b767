import { decideReactions, type ReactionsDecision } from "./decide-reactions.ts";
import { evolveReactions } from "./evolve-reactions.ts";
import type { ReactionInput } from "./reaction-commands.ts";
import type { ReactionEvent } from "./reaction-events.ts";
import { reactionsDeadlines } from "./reactions-deadlines.ts";
import { initialReactionsState, type ReactionsState } from "./reactions-state.ts";

/** The node reactions as a process decider: its state folded from its own stream, its next look a deadline. */
export const reactionsDecider: {
  initialState(): ReactionsState;
  decide(input: ReactionInput, state: ReactionsState): ReactionsDecision;
  evolve(state: ReactionsState, event: ReactionEvent): ReactionsState;
  deadlines(state: ReactionsState): ReturnType<typeof reactionsDeadlines>;
} = {
  initialState: initialReactionsState,
  decide: decideReactions,
  evolve: evolveReactions,
  deadlines: reactionsDeadlines,
};
