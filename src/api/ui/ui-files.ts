import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { extname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** One file of the built console, read once at start. */
export interface UiFile {
  readonly body: Buffer;
  readonly contentType: string;
  /** A strong ETag: the content's sha256. */
  readonly etag: string;
  /** Vite names what is under assets/ by its content's hash: a name never changes content. */
  readonly immutable: boolean;
}

/** The console's files by their path under /ui/ (`index.html`, `assets/index-1a2b3c.js`). */
export type UiFiles = ReadonlyMap<string, UiFile>;

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".txt": "text/plain; charset=utf-8",
};

function* walk(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else if (entry.isFile()) yield path;
  }
}

/**
 * Every file of the built console (a few, about 100 kB with source maps) in memory: serving them is a map look-up,
 * with no path ever joined to the disk, so no request can reach another file. Undefined when the console was not
 * built (no index.html), e.g. when running from the sources without `npm run build`.
 */
export function loadUiFiles(dir: string): UiFiles | undefined {
  if (!existsSync(join(dir, "index.html"))) return undefined;
  const files = new Map<string, UiFile>();
  for (const path of walk(dir)) {
    const name = relative(dir, path).split(sep).join("/");
    const body = readFileSync(path);
    files.set(name, {
      body,
      contentType: CONTENT_TYPES[extname(name)] ?? "application/octet-stream",
      etag: `"${createHash("sha256").update(body).digest("base64url")}"`,
      immutable: name.startsWith("assets/"),
    });
  }
  return files;
}

/**
 * dist/ui, where `npm run build` puts the console: found from this file upwards, as it is three levels below the
 * package in the sources (src/api/ui/) and four in the build (dist/src/api/ui/).
 */
export function uiDirectory(): string {
  let dir = new URL(".", import.meta.url);
  for (let depth = 0; depth < 5; depth++) {
    dir = new URL("..", dir);
    if (existsSync(new URL("package.json", dir))) return join(fileURLToPath(dir), "dist", "ui");
  }
  throw new Error(`cannot find Shoal's package.json above ${import.meta.url}`);
}
