/** Bad command-line arguments: printed with where to read the usage, exit code 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
  /** The help to point at, e.g. `shoal job list --help` (default `shoal --help`). */
  readonly help: string;

  constructor(message: string, help = "shoal --help") {
    super(message);
    this.help = help;
  }
}
