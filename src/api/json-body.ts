import type { FastifyInstance } from "fastify";
import { badRequest } from "../errors/shoal-error.ts";

/** Far deeper than any body Shoal accepts; a 30,000-deep document is refused after one scan. */
export const MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

interface Frame {
  /** Keys seen so far; undefined for an array. */
  readonly keys: Set<string> | undefined;
  expectKey: boolean;
  lastKey: string | undefined;
  /** The key this object is the value of, for the constructor.prototype check. */
  readonly parentKey: string | undefined;
}

function decodeKey(literal: string): string {
  try {
    return JSON.parse(literal) as string;
  } catch {
    return literal; // malformed: JSON.parse of the whole body reports it
  }
}

/**
 * One linear pass over the text, before it is parsed: nesting depth, duplicate keys (JSON.parse
 * would silently keep the last one, so a body could say two things) and the prototype-poisoning
 * keys Fastify's own parser refuses. Strings are skipped whole, so brackets inside them do not count.
 */
function checkStructure(text: string): void {
  const stack: Frame[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      let end = i + 1;
      while (end < text.length && text.charCodeAt(end) !== QUOTE) end += text.charCodeAt(end) === BACKSLASH ? 2 : 1;
      const top = stack[stack.length - 1];
      if (top?.keys && top.expectKey) {
        const key = decodeKey(text.slice(i, end + 1));
        if (top.keys.has(key)) throw badRequest(`the JSON body has the key "${key}" twice in one object`);
        if (key === "__proto__" || (key === "prototype" && top.parentKey === "constructor")) {
          throw badRequest(`the JSON body may not use the key "${key}" there`);
        }
        top.keys.add(key);
        top.expectKey = false;
        top.lastKey = key;
      }
      i = end;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (stack.length >= MAX_JSON_DEPTH)
        throw badRequest(`the JSON body is nested deeper than ${MAX_JSON_DEPTH} levels`);
      const top = stack[stack.length - 1];
      const isObject = c === OPEN_OBJECT;
      stack.push({
        keys: isObject ? new Set() : undefined,
        expectKey: isObject,
        lastKey: undefined,
        parentKey: top?.keys ? top.lastKey : undefined,
      });
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      stack.pop();
    } else if (c === COMMA) {
      const top = stack[stack.length - 1];
      if (top?.keys) top.expectKey = true;
    }
  }
}

/** A request body as JSON, or a 400 that says what is wrong with it. Cost is linear in its length. */
export function parseJsonBody(raw: string): unknown {
  const text = raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw;
  if (text.trim() === "") throw badRequest("the request body is empty; send a JSON document");
  checkStructure(text);
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw badRequest(`the request body is not valid JSON: ${(e as Error).message}`);
  }
}

/**
 * JSON is the only body the API takes (anything else is 415), parsed by parseJsonBody instead of
 * Fastify's parser, which accepts duplicate keys and any depth.
 */
export function registerJsonBodyParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(body as string));
    } catch (e) {
      done(e as Error, undefined);
    }
  });
}
