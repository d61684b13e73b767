import { Schema } from "effect";
import type { JobControl } from "../../actors/job-control.ts";
import type { OwnedCommand } from "../../cluster/owned-command.ts";

const StopArgs = Schema.Struct({ Reason: Schema.String.pipe(Schema.maxLength(1024)) });

/**
 * DELETE /jobs/:id, carried out by the holder of the `jobs` duty, which runs the job actors and workflows
 * (src/cluster/owner-commands.ts): on the job's exact id, resolved by the orchestrator that received it.
 */
export function stopJobCommand(control: JobControl): OwnedCommand<typeof StopArgs.Type> {
  return {
    name: "stop-job",
    args: StopArgs,
    duty: "jobs",
    async run(jobId, { Reason }, context) {
      const stopped = await control.stop(jobId, Reason, context);
      return { position: stopped.position, changed: stopped.position !== undefined };
    },
  };
}
