import type { RecordedEvent } from "../../events/store/event-store.ts";
import { toClusterEvent } from "../cluster-event.ts";

const frameHead = (position: number): string => `id: ${position}\ndata: `;

/**
 * An event as a Server-Sent Events message: its position as the id (what a client resumes from with Last-Event-ID),
 * no event name (a browser EventSource's onmessage receives it) and the feed's JSON on one data line (JSON.stringify
 * escapes every line break).
 */
export function sseFrame(e: RecordedEvent): Buffer {
  return Buffer.from(`${frameHead(e.position)}${JSON.stringify(toClusterEvent(e))}\n\n`, "utf8");
}

/** The event's JSON inside its message (what NATS carries): a view of the same bytes, not a copy. */
export function sseFrameJson(frame: Buffer, position: number): Buffer {
  // The head is ASCII: its length in characters is its length in bytes.
  return frame.subarray(frameHead(position).length, frame.length - 2);
}

/** The name of the last message a client that is cut off or sent away receives before the stream ends. */
export const RESUME_EVENT = "resume";

/** The message that ends a stream: where to resume (`after`, also the id) and why it ended. */
export function resumeFrame(after: number, reason: string): Buffer {
  return Buffer.from(`id: ${after}\nevent: ${RESUME_EVENT}\ndata: ${JSON.stringify({ after, reason })}\n\n`, "utf8");
}

export const KEEP_ALIVE_FRAME: Buffer = Buffer.from(": keep-alive\n\n", "utf8");
