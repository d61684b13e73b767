import { Schema } from "effect";

/**
 * Bacalhau's models.InputSource as Shoal stores it in a task: where the data comes from (a storage
 * type and its params) and where the container sees it. NEVER tighten it: every spec an earlier
 * Shoal stored must stay readable. What a submission may hold is submitted-input-source.ts's to say.
 */

/** The storage types this build reads data from (Bacalhau's StorageSourceLocalDirectory, StorageSourceURL). */
export const INPUT_SOURCE_TYPES = ["localDirectory", "urlDownload"] as const;
export type InputSourceType = (typeof INPUT_SOURCE_TYPES)[number];

/** At most this many inputs per task; paths and URLs at most these many characters (they travel in work messages). */
export const INPUT_SOURCE_LIMITS = { items: 32, pathLength: 1024, urlLength: 2048, aliasLength: 256 } as const;

/** Bacalhau's models.SpecConfig: a type and its params (localDirectory: SourcePath, ReadWrite; urlDownload: URL). */
export const InputSourceSpec = Schema.Struct({
  Type: Schema.String,
  Params: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
});

export const InputSource = Schema.Struct({ Source: InputSourceSpec, Alias: Schema.String, Target: Schema.String });
export type InputSource = typeof InputSource.Type;
