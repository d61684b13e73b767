/** The state of one thing Shoal needs to work (NATS, the store, …), as /agent/ready lists it. */
export interface CheckResult {
  readonly ok: boolean;
  /** What is wrong, or what was seen when all is well. */
  readonly reason: string;
  /** Since when the check has been in this state (ms since the epoch), when known. */
  readonly since?: number;
}

/** Checks are supplied by the composition root, which owns the NATS connection and the store. */
export interface HealthCheck {
  readonly name: string;
  check(): Promise<CheckResult>;
}

export interface CheckReport {
  readonly Name: string;
  readonly Status: "OK" | "FAILING";
  readonly Reason: string;
  readonly Since?: string;
}

/** Runs every check at once; a check that throws counts as failing with its message. */
export async function runChecks(checks: readonly HealthCheck[]): Promise<CheckReport[]> {
  return Promise.all(
    checks.map(async (c): Promise<CheckReport> => {
      let result: CheckResult;
      try {
        result = await c.check();
      } catch (e) {
        result = { ok: false, reason: e instanceof Error ? e.message : String(e) };
      }
      return {
        Name: c.name,
        Status: result.ok ? "OK" : "FAILING",
        Reason: result.reason,
        ...(result.since === undefined ? {} : { Since: new Date(result.since).toISOString() }),
      };
    }),
  );
}
