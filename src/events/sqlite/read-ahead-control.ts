/**
 * The shared words between the reader thread and the thread taking its pages (an Int32Array
 * over a SharedArrayBuffer), so that neither sends a message per page for flow control:
 * TAKEN counts pages taken (the reader blocks while it has `depth` more out), WAITING is set by
 * the taker before it sleeps (the reader then posts a word on its parent port after its next
 * page), STOP tells a blocked reader to end.
 */
export const TAKEN = 0;
export const WAITING = 1;
export const STOP = 2;
export const CONTROL_WORDS = 3;
