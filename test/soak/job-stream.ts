import { shellJob } from "../support/shell-job.ts";

export type JobType = "batch" | "ops" | "service" | "daemon";

/** The soak's mix, repeated: half batch, a quarter ops, services and daemons an eighth each. */
const CYCLE: readonly JobType[] = ["batch", "ops", "batch", "service", "batch", "daemon", "batch", "ops"];

/** Only the real agents carry it: `shoal sim`'s virtual nodes run no work. */
export const AGENT_LABEL = { key: "soak-executor", value: "docker" } as const;

/** Short work in the busybox test image; services and daemons run until the soak stops them. */
function specOf(type: JobType, image: string, n: number) {
  const command = type === "batch" || type === "ops" ? `echo soak ${type} ${n}` : "sleep 3600";
  return shellJob(image, command, {
    type,
    resources: { CPU: "50m", Memory: "16Mb" },
    constraints: [{ Key: AGENT_LABEL.key, Operator: "=", Values: [AGENT_LABEL.value] }],
    // A job submitted while an agent is reconnecting after a restart waits rather than fails at once.
    ...(type === "daemon" ? {} : { timeouts: { QueueTimeout: 120 } }),
  });
}

/** What became of the submissions: accepted by type, and the rest by what the API (or the socket) said. */
export interface SubmissionCounts {
  readonly accepted: Record<string, number>;
  readonly outcomes: Record<string, number>;
}

/**
 * A steady stream of jobs over REST at `perSecond`, as a user submits them (PUT /jobs with the
 * admin key). Submissions go on while the orchestrator is down: those fail at the socket and are
 * counted, not retried (a job whose answer was lost may be stored anyway; the checks read the store).
 */
export class JobStream {
  readonly counts: SubmissionCounts = { accepted: {}, outcomes: {} };
  private n = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly apiUrl: string,
    private readonly apiKey: () => string,
    private readonly image: string,
  ) {}

  start(perSecond: number): void {
    this.timer = setInterval(() => this.submitNext(), 1000 / perSecond);
  }

  private submitNext(): void {
    const n = this.n++;
    const type = CYCLE[n % CYCLE.length] as JobType;
    const p = this.submit(type, n).finally(() => this.inFlight.delete(p));
    this.inFlight.add(p);
  }

  private async submit(type: JobType, n: number): Promise<void> {
    let outcome: string;
    try {
      const res = await fetch(`${this.apiUrl}/api/v1/orchestrator/jobs`, {
        method: "PUT",
        headers: { authorization: `Bearer ${this.apiKey()}`, "content-type": "application/json" },
        body: JSON.stringify({ Job: specOf(type, this.image, n) }),
        signal: AbortSignal.timeout(30_000),
      });
      const text = await res.text();
      if (res.status === 200) {
        this.counts.accepted[type] = (this.counts.accepted[type] ?? 0) + 1;
        return;
      }
      outcome = `HTTP ${res.status}${res.status < 500 ? ` ${text.slice(0, 200)}` : ""}`;
    } catch (e) {
      outcome = `no answer (${((e as Error).cause as Error | undefined)?.message ?? (e as Error).message})`;
    }
    this.counts.outcomes[outcome] = (this.counts.outcomes[outcome] ?? 0) + 1;
  }

  get submitted(): number {
    return this.n;
  }

  /** Stops submitting; resolves once every submission under way has its answer. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all(this.inFlight);
  }
}
