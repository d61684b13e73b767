/**
 * The defaults of Compute.Publishers.Local.RetentionPeriod and MaxTotalBytes: a week, 10 GiB. Dependency-free, for
 * the config keys.
 */
export const DEFAULT_RESULT_RETENTION = { periodMs: 7 * 24 * 3_600_000, maxTotalBytes: 10 * 1024 ** 3 } as const;
