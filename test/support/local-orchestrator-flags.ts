/**
 * The `-c` flags of a `shoal serve` or `shoal devstack` run by a test: its DataDir, and its API and
 * NATS on local ports of the test's choosing.
 */
export function localOrchestratorFlags(where: {
  readonly dataDir: string;
  readonly apiPort: number;
  readonly natsPort: number;
}): string[] {
  return [
    "-c",
    `DataDir=${where.dataDir}`,
    "-c",
    "API.Host=127.0.0.1",
    "-c",
    `API.Port=${where.apiPort}`,
    "-c",
    "Orchestrator.Host=127.0.0.1",
    "-c",
    `Orchestrator.Port=${where.natsPort}`,
  ];
}
