import { defineRoute, type AnyRoute } from "../route.ts";
import { apiDocsPage, DOCS_STYLE_HASH, type OpenApiDocument } from "./api-docs-page.ts";

export const API_DOCS_PATH = "/api/v1/docs";

/** Nothing but the page's own style: no script, no frame, no form, no request elsewhere. */
const CSP = [
  "default-src 'none'",
  `style-src '${DOCS_STYLE_HASH}'`,
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/**
 * GET /api/v1/docs: the OpenAPI document as a page to read in a browser. Public, as the document is. Not an operation
 * of the document itself (it is a view of it); rendered once, at the first request.
 */
export function apiDocsRoute(document: () => Record<string, unknown>): AnyRoute {
  let page: string | undefined;
  return defineRoute({
    method: "GET",
    path: API_DOCS_PATH,
    operationId: "apiDocs",
    tags: ["Documentation"],
    summary: "Returns this API's documentation as an HTML page.",
    description: "The OpenAPI document rendered as one page: operations by tag, parameters, responses and schemas.",
    capability: "public",
    undocumented: true,
    responses: { "200": { description: "The page", contentType: "text/html" } },
    handler: async (_input, _request, reply) => {
      page ??= apiDocsPage(document() as unknown as OpenApiDocument);
      return reply
        .header("content-security-policy", CSP)
        .header("x-content-type-options", "nosniff")
        .type("text/html; charset=utf-8")
        .send(page);
    },
  });
}
