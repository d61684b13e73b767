import type { CheckResult, HealthCheck } from "../api/agent/health-check.ts";
import { ShoalError } from "../errors/shoal-error.ts";
import type { CheckpointStore, EventStore } from "../events/store/event-store.ts";
import { WrongExpectedRevisionError } from "../events/store/store-errors.ts";
import { within } from "../lifecycle/within.ts";

const PROBE_TIMEOUT_MS = 2_000;
/** Written only while the last write failed, to notice that writes work again (disk freed, store back). */
const WRITE_PROBE_CHECKPOINT = "shoal-readiness-probe";

type Store = EventStore & CheckpointStore;

interface WriteFailure {
  /** The first failure since the last successful write. */
  readonly at: number;
  readonly message: string;
}

/** A refusal about the request (a concurrent writer, bad input) says nothing about the store. */
function isStoreFault(e: unknown): boolean {
  if (e instanceof WrongExpectedRevisionError) return false;
  if (e instanceof ShoalError) return e.kind === "Unavailable" || e.kind === "Internal";
  return true;
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

class ProbeTimeout extends Error {}

async function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  const result = await within(work, ms);
  if (!result.ok) throw new ProbeTimeout(`${what} did not answer within ${ms}ms`);
  return result.value;
}

/**
 * Whether the event store can be used: a read with a timeout, and the outcome of the last write
 * (a store that reads but cannot write — full disk, read-only file — is not usable). Writes are
 * observed on the store this class hands out, which the orchestrator wires everywhere.
 */
export class StoreHealth implements HealthCheck {
  readonly name = "store";
  /** The store to use: the same one, with every append and checkpoint save observed. */
  readonly store: Store;
  private lastWriteFailure: WriteFailure | undefined;
  private probe: Promise<CheckResult> | undefined;

  constructor(
    inner: Store,
    private readonly description: string,
    /** Told of every acknowledged append: how many events, and the position of the last (the metrics). */
    onAppended?: (events: number, position: number) => void,
  ) {
    const observe =
      <A extends unknown[], R>(write: (...args: A) => Promise<R>) =>
      async (...args: A): Promise<R> => {
        try {
          const result = await write(...args);
          this.lastWriteFailure = undefined;
          return result;
        } catch (e) {
          if (isStoreFault(e))
            this.lastWriteFailure = { at: this.lastWriteFailure?.at ?? Date.now(), message: message(e) };
          throw e;
        }
      };
    const observedAppend = observe(inner.append.bind(inner));
    const append: Store["append"] = async (stream, events, expected) => {
      const result = await observedAppend(stream, events, expected);
      onAppended?.(events.length, result.position);
      return result;
    };
    const save = observe(inner.save.bind(inner));
    // A proxy rather than a wrapper class, so methods the port gains later pass through untouched.
    this.store = new Proxy(inner, {
      get(target, prop) {
        if (prop === "append") return append;
        if (prop === "save") return save;
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  }

  check(): Promise<CheckResult> {
    // Concurrent probes share one: a hung store is not asked again and again.
    this.probe ??= this.run().finally(() => (this.probe = undefined));
    return this.probe;
  }

  private async run(): Promise<CheckResult> {
    try {
      await withTimeout(this.store.readAll({ maxCount: 1 }), PROBE_TIMEOUT_MS, "a read");
    } catch (e) {
      return { ok: false, reason: `${this.description} cannot be read: ${message(e)}` };
    }
    const failed = this.lastWriteFailure;
    if (!failed) return { ok: true, reason: `${this.description} is readable and its last write succeeded` };
    try {
      await withTimeout(this.store.save(WRITE_PROBE_CHECKPOINT, 0), PROBE_TIMEOUT_MS, "a write");
      return { ok: true, reason: `${this.description} accepts writes again` };
    } catch (e) {
      // A probe that only timed out (the store's writes wait off the event loop, e.g. on a lock)
      // says nothing of why; the write that failed does.
      const why = e instanceof ProbeTimeout ? `${message(e)}; the last write failed: ${failed.message}` : message(e);
      return { ok: false, reason: `${this.description} cannot be written: ${why}`, since: failed.at };
    }
  }
}
