import type { Logger } from "pino";
import type { ExecutionCommand, ExecutionRefusal } from "../../../machines/execution/execution-commands.ts";
import type { ExecutionState } from "../../../machines/execution/execution-state.ts";
import type { CommandContext } from "../../actors/command-context.ts";
import type { EntityRegistry } from "../../actors/entity-registry.ts";
import { asShoalError } from "../../errors/shoal-error.ts";
import type { ExecutionEvent } from "../../events/catalog/execution-events.ts";
import type { WorkClient } from "../../transport/node-work-client.ts";
import { MORE_THAN_NEEDED, approvalsOf } from "./bid-approval.ts";

export interface BidApproverOptions {
  readonly executions: EntityRegistry<ExecutionState, ExecutionCommand, ExecutionEvent, ExecutionRefusal>;
  readonly work: WorkClient;
  readonly logger: Logger;
}

/**
 * Carries out the approval of a batch or service job's bids (`approvalsOf`): Approve (the
 * workflow then sends the node RunExecution), Reject (the node kept nothing for a bid, so it is
 * told nothing), Cancel (the node is told to stop it). Called once per accepted bid, in the
 * workflow's order, so two approvals of one job never run at once. A command the execution no
 * longer takes (its node declined or it was cancelled meanwhile) is skipped: the next accepted
 * bid, or the execution's end, brings the partition up again.
 */
export class BidApprover {
  constructor(private readonly options: BidApproverOptions) {}

  async approve(executions: readonly ExecutionState[], context: CommandContext): Promise<void> {
    const plan = approvalsOf(executions);
    const byId = new Map(executions.map((e) => [e.executionId, e]));
    for (const id of plan.approve) await this.tryExecute(id, { type: "Approve" }, context);
    for (const id of plan.reject) await this.tryExecute(id, { type: "Reject", reason: MORE_THAN_NEEDED }, context);
    for (const id of plan.cancel) {
      if (await this.tryExecute(id, { type: "Cancel", reason: MORE_THAN_NEEDED }, context)) {
        this.options.work.cancelExecution(byId.get(id)!.nodeId, id, MORE_THAN_NEEDED);
      }
    }
  }

  private async tryExecute(executionId: string, command: ExecutionCommand, context: CommandContext): Promise<boolean> {
    try {
      await this.options.executions.execute(executionId, command, context);
      return true;
    } catch (e) {
      const error = asShoalError(e);
      if (error.kind !== "Conflict") throw e;
      this.options.logger.info(
        { executionId, command: command.type, reason: error.message },
        "approval step skipped: the execution moved on meanwhile",
      );
      return false;
    }
  }
}
