/**
 * Shoal refuses to start; the message says what is wrong and what to do about it. Kept free of
 * dependencies so that anything that runs before the store and NATS (DataDir lock, node
 * identity, the CLI's error printer) can throw or recognise it cheaply.
 */
export class StartupError extends Error {
  override readonly name = "StartupError";
}
