import { describe, expect, it } from "vitest";
import { JobIndex } from "../../../src/projections/jobs/job-index.ts";
import type { JobSpec } from "../../../machines/job/job-spec.ts";
import { initialJobState, type JobState } from "../../../machines/job/job-state.ts";

const spec = (name: string, namespace = "default"): JobSpec =>
  ({
    Name: name,
    Namespace: namespace,
    Type: "batch",
    Priority: 0,
    Count: 1,
    Constraints: [],
    Labels: {},
    Meta: {},
    Tasks: [],
  }) as unknown as JobSpec;

const submitted = (jobId: string, name: string, namespace?: string, at = 1): JobState => ({
  ...initialJobState(jobId),
  spec: spec(name, namespace),
  state: "Pending",
  version: 1,
  revision: 1,
  createTime: at,
  modifyTime: at,
});

describe("JobIndex: ids by prefix and by name", () => {
  it("finds the ids starting with a prefix, in id order, at most as many as asked, across chunks", () => {
    const index = new JobIndex();
    // More than one chunk (512 entries) of ids, so a prefix run can straddle chunks.
    const ids = Array.from({ length: 2000 }, (_, i) => `j-${(i * 7919).toString(16).padStart(8, "0")}-x`);
    ids.forEach((id, i) => index.update(undefined, submitted(id, id, "default", i)));
    const sorted = [...ids].sort();
    for (const prefix of [
      "j-0000",
      "j-00",
      "j-001",
      sorted[700]!.slice(0, 9),
      sorted[1999]!,
      "j-fffffffff",
      "k",
      "j-",
    ]) {
      const all = sorted.filter((id) => id.startsWith(prefix));
      expect(index.idsWithPrefix(prefix, 5), prefix).toEqual(all.slice(0, 5));
    }
    expect(index.idsWithPrefix("", 5)).toEqual([]);
  });

  it("keeps the jobs of a name per namespace, oldest first; a name that is the job's own id is not indexed", () => {
    const index = new JobIndex();
    const a = submitted("j-a", "nightly");
    index.update(undefined, a);
    index.update(undefined, submitted("j-b", "nightly", "other"));
    index.update(undefined, submitted("j-c", "nightly"));
    index.update(undefined, submitted("j-d", "j-d"));
    // A later state of a job does not index its name again.
    index.update(a, { ...a, state: "Running", revision: 2, modifyTime: 5 });
    expect(index.idsNamed("default", "nightly")).toEqual(["j-a", "j-c"]);
    expect(index.idsNamed("other", "nightly")).toEqual(["j-b"]);
    expect(index.idsNamed("default", "j-d")).toEqual([]);
    expect(index.idsNamed("default", "weekly")).toEqual([]);
  });
});
