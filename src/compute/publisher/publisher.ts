import type { PublisherType } from "../../events/catalog/publisher-types.ts";
import type { PublishedResult } from "../../transport/work-messages.ts";
import type { StagedResult } from "./result-staging.ts";

export type { PublishedResult };

/**
 * Publishes what an execution left in its result paths, with its stdout, stderr and exitCode
 * (staged by ResultStaging, Bacalhau's layout). Another store (S3, say) implements the same.
 * Rejects with a ShoalError when it cannot; the execution then fails with that message.
 */
export interface Publisher {
  readonly type: PublisherType;
  publish(executionId: string, staged: StagedResult): Promise<PublishedResult>;
  /** Removes what it holds of the execution's result (nothing when it holds none). */
  remove(executionId: string): Promise<void>;
}
