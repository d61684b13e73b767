/** The default of Compute.Publishers.MaxResultBytes: dependency-free, for the config keys. */
export const DEFAULT_MAX_RESULT_BYTES = 100 * 1024 * 1024;
