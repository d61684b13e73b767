/**
 * The publishers this build has (Bacalhau's models.PublisherLocal, …): what a task's
 * `Publisher.Type` may name. Dependency-free so that the CLI and the compute node share the list
 * without loading the schema library. S3 is not here: a node would need credentials and a bucket
 * that Shoal does not yet configure.
 */
export const PUBLISHER_TYPES = ["local"] as const;
export type PublisherType = (typeof PUBLISHER_TYPES)[number];

/** File names a result's archive keeps for the command's own output (Bacalhau's DownloadFilename*). */
export const RESULT_OUTPUT_FILES = ["stdout", "stderr", "exitCode"] as const;
