/** The API path of a job by its id, a unique prefix of it, or its name in `namespace` (absent: the default one). */
export function jobLookupPath(idOrName: string, namespace: string | undefined): string {
  const path = `/api/v1/orchestrator/jobs/${encodeURIComponent(idOrName)}`;
  return namespace ? `${path}?${new URLSearchParams({ namespace })}` : path;
}
