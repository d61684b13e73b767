/**
 * The orchestrator's start-up phases, in the order they run: open the store and NATS; recover (snapshots read, read
 * models seeded); follow (processors added, then started); catch up (each read model reaches the store's position at
 * start); arm (deadlines, resumed dispatch, sweeps, drains); listen (nodes' messages taken, then listening begins);
 * serve (the API).
 */
export const PHASES = ["open", "recover", "follow", "catch up", "arm", "listen", "serve"] as const;
export type Phase = (typeof PHASES)[number];

/**
 * How long a read model may fold nothing in the catch-up phase before start-up stops: the catch-up itself may take as
 * long as the store's history needs, as long as it moves.
 */
export const CATCH_UP_STALL_MS = 120_000;

/** The phases a module takes part in: open is the shared services' (the store, NATS), never a module's. */
export type ModulePhase = Exclude<Phase, "open">;

export type ModuleStep = () => Promise<void> | void;

/**
 * An entity or a process of the orchestrator, as start-up sees it: a step for each phase it takes part in, run after
 * the steps of the modules listed before it (src/orchestrator/modules.ts). A module adds its stop steps to the
 * context's StopSteps where it builds what they stop.
 */
export interface Module {
  readonly name: string;
  readonly recover?: ModuleStep;
  readonly follow?: ModuleStep;
  readonly catchUp?: ModuleStep;
  readonly arm?: ModuleStep;
  readonly listen?: ModuleStep;
  readonly serve?: ModuleStep;
  /**
   * A snapshot of its read model written on stop, after the processors stopped, so that it is the read model's final
   * state: `writing the <name> snapshot`.
   */
  readonly snapshot?: { readonly name: string; readonly write: () => Promise<unknown> | unknown };
}

const STEP_OF: Readonly<Record<ModulePhase, Exclude<keyof Module, "name" | "snapshot">>> = {
  recover: "recover",
  follow: "follow",
  "catch up": "catchUp",
  arm: "arm",
  listen: "listen",
  serve: "serve",
};

/** The module's step for `phase`, if it takes part in it. */
export function stepOf(module: Module, phase: ModulePhase): ModuleStep | undefined {
  return module[STEP_OF[phase]];
}

/**
 * What one phase of a module makes for later phases (its own or another module's) to read: the node read model's
 * processor lane, the store's position at start. Read before it is made, it names itself and its phase.
 */
export class Later<T> {
  private made = false;
  private value: T | undefined;

  constructor(
    private readonly what: string,
    private readonly phase: ModulePhase,
  ) {}

  set(value: T): T {
    if (this.made) throw new Error(`${this.what} was made twice`);
    this.made = true;
    this.value = value;
    return value;
  }

  get(): T {
    if (!this.made) throw new Error(`${this.what} is read before its ${this.phase} phase made it`);
    return this.value as T;
  }
}
