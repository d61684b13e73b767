import type { ComponentChildren } from "preact";
import type { Job } from "../api/types.ts";
import { Facts, Labels, Time } from "../common/format.tsx";
import { nanosToIso } from "./job-format.tsx";

const seconds = (s: number): string => (s === 0 ? "none" : `${s} s`);

/** What the job runs and under which limits: its stored spec, in short (`shoal job describe` shows it whole). */
export function JobSpecSummary(props: { readonly job: Job }) {
  const { job } = props;
  const task = job.Tasks[0];
  const rows: [string, ComponentChildren][] = [
    ["Name", job.Name],
    ["Namespace", job.Namespace],
    ["Type", job.Type],
    ["Count", job.Count === 0 ? "every matching node" : job.Count],
    ["Priority", job.Priority],
    ["Created", <Time at={nanosToIso(job.CreateTime)} />],
    ["Modified", <Time at={nanosToIso(job.ModifyTime)} />],
    ["Version, revision", `${job.Version}, ${job.Revision}`],
  ];
  if (task !== undefined) {
    const { Image, Entrypoint, Parameters } = task.Engine.Params;
    const r = task.Resources;
    rows.push(
      ["Image", <code>{Image}</code>],
      ["Command", <code>{[...Entrypoint, ...Parameters].join(" ") || "the image's own"}</code>],
      [
        "Resources",
        [`CPU ${r.CPU ?? "—"}`, `memory ${r.Memory ?? "—"}`, ...(r.Disk ? [`disk ${r.Disk}`] : [])].join(", ") +
          (r.GPU ? `, GPU ${r.GPU}` : ""),
      ],
      [
        "Timeouts",
        `execution ${seconds(task.Timeouts.ExecutionTimeout)}, queue ${seconds(task.Timeouts.QueueTimeout)}, ` +
          `total ${seconds(task.Timeouts.TotalTimeout)}`,
      ],
      ["Network", task.Network.Type],
    );
  }
  if (job.Constraints.length > 0)
    rows.push([
      "Constraints",
      <code>{job.Constraints.map((c) => `${c.Key} ${c.Operator} ${c.Values.join(",")}`.trim()).join("; ")}</code>,
    ]);
  rows.push(["Labels", <Labels labels={job.Labels} />]);
  return <Facts rows={rows} />;
}
