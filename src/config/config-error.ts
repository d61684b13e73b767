/** Bad configuration: the process refuses to start and says which source and key are wrong. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
}
