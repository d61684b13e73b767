import { goFold } from "../events/catalog/go-fold.ts";

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The key a job file holds its job under, if it wraps it: one `Job` key over an object (a PUT /jobs body, or what
 * `shoal job describe -o yaml` prints), in any case, as the API matches a body's keys (Go's encoding/json). A
 * document with Tasks is the job itself, whatever else it carries.
 */
export function jobWrapperKey(document: unknown): string | undefined {
  if (!isRecord(document)) return undefined;
  const keys = Object.keys(document);
  if (keys.some((k) => goFold(k) === "tasks")) return undefined;
  const key = keys.find((k) => goFold(k) === "job");
  return key !== undefined && isRecord(document[key]) ? key : undefined;
}

/** The job a job file holds: the document itself, or the job under its wrapper key (`jobWrapperKey`). */
export function unwrapJob(document: unknown): unknown {
  const key = jobWrapperKey(document);
  return key === undefined ? document : (document as Record<string, unknown>)[key];
}
