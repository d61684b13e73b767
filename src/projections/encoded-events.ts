import type { RecordedEvent } from "../events/store/event-store.ts";
import { sseFrame, sseFrameJson } from "./event-stream/sse-frame.ts";

/** What the orchestrator keeps of the newest events encoded, at most (docs/audit.md, The event stream). */
export const ENCODED_EVENTS_BYTES = 4 * 1024 ** 2;

/**
 * Each event's wire form, encoded once for everything that sends it: its Server-Sent Events message, whose data line
 * is the JSON the NATS publisher sends (the same bytes, a view, not a copy). The publisher and the event stream's hub
 * handle the same envelopes in the same turn, and clients catching up from the store read the same pages one after
 * another: whoever comes first encodes, the others take its bytes. Held by position, the newest encoded kept within
 * `maxBytes` (0: none kept, every ask encodes); an event no longer held is encoded again, to the same bytes.
 */
export class EncodedEvents {
  private readonly frames = new Map<number, Buffer>();
  private bytes = 0;
  private encoded = 0;
  private served = 0;

  constructor(private readonly maxBytes: number) {}

  /** The event's stream message: `id: <position>`, then its JSON on one data line. */
  frame(e: RecordedEvent): Buffer {
    const held = this.frames.get(e.position);
    if (held !== undefined) {
      this.served++;
      return held;
    }
    const frame = sseFrame(e);
    this.encoded++;
    if (frame.length <= this.maxBytes) {
      this.frames.set(e.position, frame);
      this.bytes += frame.length;
      while (this.bytes > this.maxBytes) this.dropOldest();
    }
    return frame;
  }

  /** The event's JSON, as NATS carries it: the data line of its stream message. */
  json(e: RecordedEvent): Buffer {
    return sseFrameJson(this.frame(e), e.position);
  }

  /** How many times an event was encoded (an event asked for again while held is not). */
  get encodings(): number {
    return this.encoded;
  }

  /** How many asks were answered with a message held (the others, `encodings`, each encoded one). */
  get hits(): number {
    return this.served;
  }

  /** The bytes of the messages held. */
  get heldBytes(): number {
    return this.bytes;
  }

  private dropOldest(): void {
    const [position, frame] = this.frames.entries().next().value as [number, Buffer];
    this.frames.delete(position);
    this.bytes -= frame.length;
  }
}
