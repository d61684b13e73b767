import { Schema } from "effect";
import type { JobControl } from "../../actors/job-control.ts";
import type { OwnedCommand } from "../../cluster/owned-command.ts";

const RerunArgs = Schema.Struct({
  JobVersion: Schema.Number.pipe(Schema.int(), Schema.nonNegative()),
  Reason: Schema.String.pipe(Schema.maxLength(1024)),
});

/**
 * PUT /jobs/:id/rerun, carried out by the holder of the `jobs` duty, which runs the job actors and workflows
 * (as a stop): on the job's exact id, resolved by the orchestrator that received it.
 */
export function rerunJobCommand(control: JobControl): OwnedCommand<typeof RerunArgs.Type> {
  return {
    name: "rerun-job",
    args: RerunArgs,
    duty: "jobs",
    async run(jobId, { JobVersion, Reason }, context) {
      const rerun = await control.rerun(jobId, JobVersion, Reason, context);
      return { position: rerun.position, changed: rerun.position !== undefined };
    },
  };
}
