/**
 * Orchestrator.NATS.URL as the client's server list: one URL, or the servers of one NATS cluster separated by
 * commas, which the client tries in turn at start and fails over between while it runs.
 */
export function natsServerUrls(url: string): string[] {
  return url
    .split(",")
    .map((u) => u.trim())
    .filter((u) => u !== "");
}
