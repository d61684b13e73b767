/**
 * Job and execution ids as Bacalhau makes them (pkg/util/idgen): `j-` or `e-` and a UUID. The
 * host assigns them (machines/ never make ids); they travel as stream names and NATS subject
 * tokens, which this shape keeps safe. Free of dependencies, like node-id.ts.
 */
const UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";

export const JOB_ID_PREFIX = "j-";
export const EXECUTION_ID_PREFIX = "e-";

export const JOB_ID_PATTERN = new RegExp(`^j-${UUID}$`);
export const EXECUTION_ID_PATTERN = new RegExp(`^e-${UUID}$`);

export const isJobId = (id: string): boolean => JOB_ID_PATTERN.test(id);
export const isExecutionId = (id: string): boolean => EXECUTION_ID_PATTERN.test(id);

/** A job id for a fresh UUID (lower-case hex, as crypto.randomUUID gives it). */
export const jobIdOf = (uuid: string): string => `${JOB_ID_PREFIX}${uuid}`;
export const executionIdOf = (uuid: string): string => `${EXECUTION_ID_PREFIX}${uuid}`;
