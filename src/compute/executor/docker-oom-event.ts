import type Docker from "dockerode";

/**
 * Whether the engine logged an `oom` event for the container since `sinceMs` (epoch milliseconds).
 *
 * Docker 20.10 takes a container's OOMKilled flag from the OOM event containerd sent *before* the exit: when the
 * event trails the exit (a loaded machine), the flag stays false for good, but the engine still logs the event. The
 * engine keeps its recent events in memory, so a query bounded by now answers at once.
 */
export async function sawOomEvent(
  docker: Docker,
  containerId: string,
  sinceMs: number,
  signal?: AbortSignal,
): Promise<boolean> {
  // Best effort: an engine that will not list its events (a socket proxy that blocks /events) leaves the exit as
  // the flag says, never an engine failure.
  try {
    const stream = await docker.getEvents({
      since: sinceMs / 1000 - 1,
      // Now, not later: an `until` in the future would hold the answer back until then.
      until: Date.now() / 1000,
      filters: { container: [containerId], event: ["oom"] },
      ...(signal ? { abortSignal: signal } : {}),
    } as Docker.GetEventsOptions);
    let text = "";
    for await (const chunk of stream) text += String(chunk);
    return text.includes('"oom"');
  } catch {
    return false;
  }
}
