import type { Body } from "./job-api-client.ts";

/** The messages of an NDJSON body (the logs route's without the WebSocket upgrade), one per non-empty line. */
export const ndjson = (text: string): Body[] =>
  text
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Body);
