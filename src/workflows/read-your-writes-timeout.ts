/**
 * How long a workflow waits for a read model to fold an event it must see before it reads the read model: what it
 * appended itself, or the event it reacts to (read-your-writes across the processors' lanes). A read model that keeps
 * up folds an event within milliseconds of its append, and one working through a burst within a few seconds; ten is
 * well past both, yet short enough that a read model that is stuck fails what waits on it, saying so, rather than hold
 * a workflow for good.
 */
export const READ_YOUR_WRITES_TIMEOUT_MS = 10_000;
