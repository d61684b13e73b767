/** What a compute agent waits at least between two attempts to reconnect to NATS. */
export const RECONNECT_WAIT_MS = 1_000;

/**
 * The window over which a fleet of `nodes` connected compute nodes spreads its reconnects after
 * the orchestrator's NATS comes back (a restart), so that about `loginsPerSecond` of them log in
 * each second instead of all at once (docs/protocol.md, Reconnecting): whole seconds, rounded
 * down, since a fleet smaller than `loginsPerSecond` already arrives over RECONNECT_WAIT_MS.
 * 0: no spread (no limit asked, or a fleet that small).
 */
export function reconnectSpreadMs(nodes: number, loginsPerSecond: number): number {
  if (!(loginsPerSecond > 0) || !(nodes > 0)) return 0;
  return Math.floor(nodes / loginsPerSecond) * 1000;
}

/**
 * An agent's wait before its next reconnect attempt: RECONNECT_WAIT_MS plus `draw` (a number in
 * [0, 1), drawn once per agent and outage) of the spread the orchestrator last announced. Kept for
 * the whole outage, so that the agent's attempts after the server is back land anywhere in
 * [0, RECONNECT_WAIT_MS + spread), wherever the others' land.
 */
export function reconnectWaitMs(spreadMs: number, draw: number): number {
  return RECONNECT_WAIT_MS + Math.floor(Math.max(0, spreadMs) * draw);
}
