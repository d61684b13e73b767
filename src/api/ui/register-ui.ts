import type { FastifyInstance, FastifyReply } from "fastify";
import { notFound } from "../../errors/shoal-error.ts";
import { sendError } from "../error-body.ts";
import type { UiFile, UiFiles } from "./ui-files.ts";

/**
 * Only this origin's own scripts, styles and API: nothing the console loads can come from elsewhere, and a script
 * injected into a page would not run.
 */
export const UI_CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join("; ");

/** A path with no extension outside assets/ is one of the console's pages (`/ui/nodes/n-1`): its index.html. */
const isPage = (path: string): boolean => !path.startsWith("assets/") && !/\.[^/]*$/.test(path);

function send(reply: FastifyReply, file: UiFile, ifNoneMatch: string | undefined): FastifyReply {
  void reply
    .header("Content-Type", file.contentType)
    .header("ETag", file.etag)
    // index.html names the current assets, so it is revalidated every time; the assets themselves never change.
    .header("Cache-Control", file.immutable ? "public, max-age=31536000, immutable" : "no-cache");
  if (ifNoneMatch !== undefined && ifNoneMatch.split(",").some((tag) => tag.trim() === file.etag))
    return reply.code(304).send();
  return reply.send(file.body);
}

/**
 * The web console at /ui: its built files from memory, and index.html for every page path, which the console's
 * router then shows (a deep link or a reload works). A missing asset stays a 404, so a tab left open on an older
 * build never gets HTML for a script. These are files, not the REST API: they are public (route-access.ts), outside
 * the OpenAPI document, and the data comes from the API with its own checks.
 */
export function registerUi(app: FastifyInstance, files: UiFiles): void {
  void app.register(async (scope) => {
    scope.addHook("onSend", async (_request, reply, payload) => {
      void reply
        .header("Content-Security-Policy", UI_CONTENT_SECURITY_POLICY)
        .header("X-Content-Type-Options", "nosniff")
        .header("Referrer-Policy", "no-referrer");
      return payload;
    });
    scope.get("/ui", async (_request, reply) => reply.redirect("/ui/", 301));
    scope.get("/ui/*", async (request, reply) => {
      const path = (request.params as { "*": string })["*"];
      const file = files.get(path === "" ? "index.html" : path) ?? (isPage(path) ? files.get("index.html") : undefined);
      if (file === undefined) return sendError(request, reply, notFound(`no file /ui/${path} in the console`));
      return send(reply, file, request.headers["if-none-match"]);
    });
  });
}
