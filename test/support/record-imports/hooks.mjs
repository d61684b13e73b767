// Module-resolution hooks (they run on Node's loader thread): record every resolved URL.
import { appendFileSync } from "node:fs";

let log;

export function initialize(data) {
  log = data.log;
  if (typeof log !== "string" || log === "")
    throw new Error("record-imports: set SHOAL_TEST_IMPORT_LOG to a file path");
}

export async function resolve(specifier, context, nextResolve) {
  const result = await nextResolve(specifier, context);
  appendFileSync(log, `${result.url}\n`);
  return result;
}
