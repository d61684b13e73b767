import type { SpecProblem } from "../../src/events/catalog/walk-schema.ts";

/**
 * The problems of a submitted job, as the catalog's schema walk (src/events/catalog/walk-schema.ts)
 * and the rules here (spec-limits.ts) name them.
 */
export type { Findings, SpecProblem } from "../../src/events/catalog/walk-schema.ts";

export const problemText = (p: SpecProblem): string => (p.path === "" ? p.message : `${p.path}: ${p.message}`);

/** Quoted for a message: long input cut (it comes from the submitter). */
export const quote = (s: string): string => JSON.stringify(s.length > 70 ? `${s.slice(0, 64)}…` : s);

/** A submission refused for its problems, every one named with its field path. */
export const invalidJob = (problems: readonly SpecProblem[]) =>
  ({ code: "Invalid", message: `invalid job: ${problems.map(problemText).join("; ")}`, problems }) as const;
