/** What the job benchmarks send and read over REST. */

/** A batch job a sim node finishes at once: it asks for next to nothing, and says its run is 0 s. */
export function batchJob(n: number): string {
  return JSON.stringify({
    Job: {
      Name: `jobbench-${n}`,
      Type: "batch",
      Count: 1,
      Constraints: [{ Key: "sim", Operator: "=", Values: ["true"] }],
      Tasks: [
        {
          Name: "main",
          Engine: { Type: "docker", Params: { Image: "jobbench/sim:1", Entrypoint: ["true"] } },
          Resources: { CPU: "10m", Memory: "16Mb" },
          Env: { SHOAL_SIM_RUN: "0s" },
        },
      ],
    },
  });
}

export interface JobRow {
  readonly ID: string;
  readonly State: { readonly StateType: string; readonly Message?: string };
  readonly CreateTime: number;
  readonly ModifyTime: number;
}

export async function getJson<T>(url: string, key: string): Promise<T> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${(await res.text()).slice(0, 300)}`);
  return (await res.json()) as T;
}

export async function listJobs(apiUrl: string, key: string): Promise<JobRow[]> {
  const jobs: JobRow[] = [];
  let token = "";
  do {
    const page = await getJson<{ Items: JobRow[]; NextToken: string }>(
      `${apiUrl}/api/v1/orchestrator/jobs?limit=10000${token === "" ? "" : `&next_token=${encodeURIComponent(token)}`}`,
      key,
    );
    jobs.push(...page.Items);
    token = page.NextToken;
  } while (token !== "");
  return jobs;
}
