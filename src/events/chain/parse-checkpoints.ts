import type { AuditCheckpoint } from "./checkpoint-signature.ts";

export class CheckpointFormatError extends Error {
  override readonly name = "CheckpointFormatError";
}

const TEXT_FIELDS = ["time", "keyId", "publicKey", "signature"] as const;

function checkpointFrom(value: unknown, where: string): AuditCheckpoint {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new CheckpointFormatError(`${where}: a checkpoint is a JSON object, as published on shoal.audit.checkpoints`);
  const o = value as Record<string, unknown>;
  if (!Number.isSafeInteger(o.position) || (o.position as number) < 1)
    throw new CheckpointFormatError(`${where}: position must be a whole number of at least 1`);
  if (typeof o.link !== "string" || !/^[0-9a-f]{64}$/.test(o.link))
    throw new CheckpointFormatError(`${where}: link must be 64 lowercase hex digits`);
  for (const field of TEXT_FIELDS)
    if (typeof o[field] !== "string" || o[field] === "")
      throw new CheckpointFormatError(`${where}: ${field} must be a non-empty string`);
  return {
    position: o.position as number,
    link: o.link,
    time: o.time as string,
    keyId: o.keyId as string,
    publicKey: o.publicKey as string,
    signature: o.signature as string,
  };
}

/** The API's page of checkpoints (`GET /audit/checkpoints`), saved as it came: `{"Items": [...], "NextToken"}`. */
const pageItems = (whole: unknown): unknown[] | undefined =>
  typeof whole === "object" && whole !== null && Array.isArray((whole as { Items?: unknown }).Items)
    ? (whole as { Items: unknown[] }).Items
    : undefined;

/**
 * Checkpoints saved as published: one JSON object, a JSON array of them, NDJSON (one a line,
 * as `nats sub shoal.audit.checkpoints` appends them to a file), or a page of the API's answer.
 */
export function parseCheckpoints(text: string, source: string): AuditCheckpoint[] {
  const trimmed = text.trim();
  if (trimmed === "") throw new CheckpointFormatError(`${source}: no checkpoint in it`);
  try {
    const whole = JSON.parse(trimmed) as unknown;
    const items = Array.isArray(whole) ? whole : pageItems(whole);
    return items !== undefined
      ? items.map((c, i) => checkpointFrom(c, `${source} [${i}]`))
      : [checkpointFrom(whole, source)];
  } catch (e) {
    if (e instanceof CheckpointFormatError) throw e;
  }
  const out: AuditCheckpoint[] = [];
  const lines = trimmed.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === "") continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      throw new CheckpointFormatError(`${source}:${i + 1}: not JSON`);
    }
    out.push(checkpointFrom(parsed, `${source}:${i + 1}`));
  }
  return out;
}
