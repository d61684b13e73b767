import { asShoalError, badRequest, type ShoalError } from "../../errors/shoal-error.ts";
import type { WorkTask } from "../../transport/work-messages.ts";
import type { RunOutput } from "../executor/executor.ts";
import type { PublishedResult, Publisher } from "./publisher.ts";
import type { OutputMount, ResultStaging } from "./result-staging.ts";

/**
 * A compute node's results: the staging of each execution's result paths and the publishers it
 * has (advertised as its Publishers). An execution's result is staged, published and the staging
 * removed; a failed or cancelled execution publishes nothing.
 */
export class ExecutionResults {
  constructor(
    private readonly staging: ResultStaging,
    private readonly publishers: readonly Publisher[],
  ) {}

  get types(): string[] {
    return this.publishers.map((p) => p.type);
  }

  private publisher(type: string): Publisher | undefined {
    return this.publishers.find((p) => p.type === type);
  }

  /** Why this node cannot publish the task's results, or undefined when it can (or it has none). */
  refusal(executionId: string, nodeId: string, task: WorkTask): ShoalError | undefined {
    const type = task.Publisher?.Type;
    if (type === undefined || this.publisher(type) !== undefined) return undefined;
    const has = this.publishers.length === 0 ? "none" : this.types.join(", ");
    return badRequest(`execution ${executionId} publishes its results with ${type}; node ${nodeId} has ${has}`);
  }

  /** The directories its container writes its result paths into (none when its task publishes nothing). */
  async prepare(executionId: string, task: WorkTask): Promise<OutputMount[]> {
    if (task.Publisher === undefined) return [];
    return this.staging.prepare(executionId, task.ResultPaths ?? []);
  }

  /** Publishes its staged result; the staging is removed either way, and a half-published result too. */
  async publish(executionId: string, type: string, output: RunOutput): Promise<PublishedResult> {
    const publisher = this.publisher(type);
    try {
      if (publisher === undefined) throw badRequest(`this node has no ${type} publisher`);
      const staged = await this.staging.finish(executionId, output);
      return await publisher.publish(executionId, staged);
    } catch (e) {
      await publisher?.remove(executionId).catch(() => undefined);
      throw asShoalError(e);
    } finally {
      await this.discard(executionId);
    }
  }

  async discard(executionId: string): Promise<void> {
    await this.staging.remove(executionId);
  }
}
