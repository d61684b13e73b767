import { shellJob } from "../support/shell-job.ts";

export type JobType = "batch" | "ops" | "service" | "daemon";

/** Only the real agents carry it: the Docker jobs go to them and never to a virtual node. */
export const AGENT_LABEL = { key: "soak-executor", value: "docker" } as const;

/** One job of a mix: its type, what the counts call it, and its spec. */
export interface SoakJob {
  readonly type: JobType;
  /** `docker batch`, `sim ops`, …: how the submissions are counted. */
  readonly kind: string;
  readonly spec: unknown;
}

/** The Docker mix, repeated: half batch, a quarter ops, services and daemons an eighth each. */
const DOCKER_CYCLE: readonly JobType[] = ["batch", "ops", "batch", "service", "batch", "daemon", "batch", "ops"];

/** Short work in the busybox test image on the real agents; services and daemons run until the soak stops them. */
export function dockerJob(image: string, n: number): SoakJob {
  const type = DOCKER_CYCLE[n % DOCKER_CYCLE.length] as JobType;
  const command = type === "batch" || type === "ops" ? `echo soak ${type} ${n}` : "sleep 3600";
  const spec = shellJob(image, command, {
    type,
    resources: { CPU: "50m", Memory: "16Mb" },
    constraints: [{ Key: AGENT_LABEL.key, Operator: "=", Values: [AGENT_LABEL.value] }],
    // A job submitted while an agent is reconnecting after a restart waits rather than fails at once.
    ...(type === "daemon" ? {} : { timeouts: { QueueTimeout: 120 } }),
  });
  return { type, kind: `docker ${type}`, spec };
}

/**
 * The sim mix, 32 long: 20 batch (every third with Count 3), 8 ops on one rack of one zone (a
 * 150th of the fleet: about 13 nodes of 2,000), 3 services (Count 2) and one daemon on one rack (a
 * fiftieth: 40 nodes). Ops and daemons are where one job makes dozens of executions at once, and
 * with them the bursts of workflow steps and execution events a publisher must keep up with.
 */
const SIM_CYCLE: readonly JobType[] = [
  ...["batch", "ops", "batch", "batch", "service", "batch", "ops", "batch"],
  ...["batch", "ops", "batch", "batch", "daemon", "batch", "ops", "batch"],
  ...["batch", "ops", "batch", "batch", "service", "batch", "ops", "batch"],
  ...["batch", "ops", "batch", "batch", "service", "batch", "ops", "batch"],
] as const satisfies readonly JobType[];
const ZONES = ["zone-a", "zone-b", "zone-c"];
const RACKS = 50;

/**
 * Work for `shoal sim --run-work` nodes (label sim=true; the agents do not carry it): batch and ops
 * run for the sim's run time and exit 0, services and daemons (SHOAL_SIM_RUN=until-stopped) run
 * until the soak stops them. Racks and zones rotate, so that placements spread over the fleet.
 */
export function simJob(n: number): SoakJob {
  const type = SIM_CYCLE[n % SIM_CYCLE.length] as JobType;
  const rack = `rack-${n % RACKS}`;
  const constraints = [
    { Key: "sim", Operator: "=", Values: ["true"] },
    ...(type === "ops" || type === "daemon" ? [{ Key: "rack", Operator: "=", Values: [rack] }] : []),
    ...(type === "ops" ? [{ Key: "zone", Operator: "=", Values: [ZONES[n % ZONES.length] as string] }] : []),
  ];
  const count = type === "service" ? 2 : type === "batch" && n % 3 === 0 ? 3 : undefined;
  const longRunning = type === "service" || type === "daemon";
  const spec = {
    Type: type,
    ...(count === undefined ? {} : { Count: count }),
    Constraints: constraints,
    Tasks: [
      {
        Name: "main",
        Engine: {
          Type: "docker",
          Params: { Image: "soak/sim:1", Entrypoint: ["sh", "-c"], Parameters: [`soak sim ${type} ${n}`] },
        },
        Resources: { CPU: "100m", Memory: "64Mb" },
        ...(longRunning ? { Env: { SHOAL_SIM_RUN: "until-stopped" } } : {}),
        ...(type === "daemon" ? {} : { Timeouts: { QueueTimeout: 120 } }),
      },
    ],
  };
  return { type, kind: `sim ${type}`, spec };
}

/** What became of the submissions: accepted by kind, and the rest by what the API (or the socket) said. */
export interface SubmissionCounts {
  readonly accepted: Record<string, number>;
  readonly outcomes: Record<string, number>;
}

/**
 * A steady stream of jobs over REST at `perSecond`, as a user submits them (PUT /jobs with the
 * admin key), the n-th made by `make(n)`. Submissions go on while the orchestrator is down: those
 * fail at the socket and are counted, not retried (a job whose answer was lost may be stored
 * anyway; the checks read the store).
 */
export class JobStream {
  readonly counts: SubmissionCounts = { accepted: {}, outcomes: {} };
  private n = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly apiUrl: string,
    private readonly apiKey: () => string,
    private readonly make: (n: number) => SoakJob,
  ) {}

  start(perSecond: number): void {
    this.timer = setInterval(() => this.submitNext(), 1000 / perSecond);
  }

  private submitNext(): void {
    const job = this.make(this.n++);
    const p = this.submit(job).finally(() => this.inFlight.delete(p));
    this.inFlight.add(p);
  }

  private async submit(job: SoakJob): Promise<void> {
    let outcome: string;
    try {
      const res = await fetch(`${this.apiUrl}/api/v1/orchestrator/jobs`, {
        method: "PUT",
        headers: { authorization: `Bearer ${this.apiKey()}`, "content-type": "application/json" },
        body: JSON.stringify({ Job: job.spec }),
        signal: AbortSignal.timeout(30_000),
      });
      const text = await res.text();
      if (res.status === 200) {
        this.counts.accepted[job.kind] = (this.counts.accepted[job.kind] ?? 0) + 1;
        return;
      }
      outcome = `${job.kind}: HTTP ${res.status}${res.status < 500 ? ` ${text.slice(0, 200)}` : ""}`;
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
