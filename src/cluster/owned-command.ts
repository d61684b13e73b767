import type { Schema } from "effect";
import type { CommandContext } from "../actors/command-context.ts";

/** What an owner's write gave: where it was stored (undefined: nothing was), the entity's revision, a note. */
export interface CommandOutcome {
  readonly position: number | undefined;
  readonly revision?: number;
  /** Set when the command changed nothing and says why ("node already cordoned"). */
  readonly note?: string;
  readonly changed: boolean;
}

/**
 * A write that only the entity's owner carries out: the holder of the entity's partition, or of `duty` when set
 * (job stops go to the `jobs` duty's holder, which runs the job actors). `args` is the command's own schema: the
 * owner checks what another orchestrator forwarded with it.
 */
export interface OwnedCommand<A, I = A> {
  readonly name: string;
  readonly args: Schema.Schema<A, I>;
  readonly duty?: string;
  run(
    entityId: string,
    args: A,
    context: CommandContext,
    expectedRevision: number | undefined,
  ): Promise<CommandOutcome>;
}
