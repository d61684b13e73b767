import { formatExactBytes } from "../../config/byte-size.ts";
import { badRequest, type ShoalError, unavailable } from "../../errors/shoal-error.ts";
import type { ExecutionResources } from "./executor.ts";

/** How long a caller refused for lack of free capacity might wait before asking again. */
const BUSY_RETRY_AFTER_SECONDS = 5;

const cpu = (millis: number) => `${millis}m CPU`;
const mem = formatExactBytes;

/**
 * What a compute node may still take on: its capacity minus what its running executions hold.
 * A refusal names what was asked, what is free and what the node has, so that whoever placed the
 * execution can tell "too big for this node" (BadRequest) from "busy now" (Unavailable).
 */
export class CapacityLedger {
  readonly #held = new Map<string, ExecutionResources>();

  constructor(
    readonly nodeId: string,
    readonly capacity: ExecutionResources,
  ) {}

  /** What running executions hold in all. */
  used(): ExecutionResources {
    let cpuMillis = 0;
    let memoryBytes = 0;
    for (const r of this.#held.values()) {
      cpuMillis += r.cpuMillis;
      memoryBytes += r.memoryBytes;
    }
    return { cpuMillis, memoryBytes };
  }

  free(): ExecutionResources {
    const used = this.used();
    return {
      cpuMillis: this.capacity.cpuMillis - used.cpuMillis,
      memoryBytes: this.capacity.memoryBytes - used.memoryBytes,
    };
  }

  holds(executionId: string): boolean {
    return this.#held.has(executionId);
  }

  /** Why `wanted` cannot be taken now, or undefined. */
  refusal(executionId: string, wanted: ExecutionResources): ShoalError | undefined {
    const asked = `${cpu(wanted.cpuMillis)} and ${mem(wanted.memoryBytes)} memory`;
    if (!(
      Number.isInteger(wanted.cpuMillis) &&
      wanted.cpuMillis > 0 &&
      Number.isInteger(wanted.memoryBytes) &&
      wanted.memoryBytes > 0
    )) {
      return badRequest(
        `execution ${executionId} must ask for a whole number of CPU millicores and memory bytes, both above 0 (it asks for ${asked})`,
      );
    }
    if (this.#held.has(executionId))
      return badRequest(`execution ${executionId} already holds resources on node ${this.nodeId}`);
    const { capacity } = this;
    if (wanted.cpuMillis > capacity.cpuMillis || wanted.memoryBytes > capacity.memoryBytes) {
      return badRequest(
        `node ${this.nodeId} can never fit execution ${executionId}: it asks for ${asked}; the node has ${cpu(capacity.cpuMillis)} and ${mem(capacity.memoryBytes)} memory in all`,
      );
    }
    const free = this.free();
    if (wanted.cpuMillis > free.cpuMillis || wanted.memoryBytes > free.memoryBytes) {
      return unavailable(
        `node ${this.nodeId} cannot fit execution ${executionId} now: it asks for ${asked}; free: ${cpu(free.cpuMillis)} of ${cpu(capacity.cpuMillis)}, ` +
          `${mem(free.memoryBytes)} of ${mem(capacity.memoryBytes)} memory (${this.#held.size} running)`,
        BUSY_RETRY_AFTER_SECONDS,
      );
    }
    return undefined;
  }

  /** Holds `wanted` for the execution, or throws the refusal. */
  reserve(executionId: string, wanted: ExecutionResources): void {
    const refused = this.refusal(executionId, wanted);
    if (refused) throw refused;
    this.#held.set(executionId, { cpuMillis: wanted.cpuMillis, memoryBytes: wanted.memoryBytes });
  }

  /**
   * Holds what an execution found running after a restart holds, even beyond capacity (it runs
   * already; refusing to count it would let the node overbook).
   */
  adopt(executionId: string, held: ExecutionResources): void {
    this.#held.set(executionId, { cpuMillis: held.cpuMillis, memoryBytes: held.memoryBytes });
  }

  release(executionId: string): void {
    this.#held.delete(executionId);
  }

  running(): readonly string[] {
    return [...this.#held.keys()];
  }
}
