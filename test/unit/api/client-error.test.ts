import { describe, expect, it } from "vitest";
import { clientErrorResponse } from "../../../src/api/client-error.ts";

function parse(raw: string) {
  const [head = "", body = ""] = raw.split("\r\n\r\n");
  const [statusLine = "", ...headers] = head.split("\r\n");
  return { statusLine, headers, body: JSON.parse(body) as Record<string, unknown>, bodyBytes: Buffer.byteLength(body) };
}

const error = (code: string) => Object.assign(new Error(code), { code });

describe("clientErrorResponse", () => {
  it("answers what Node's HTTP parser refuses with Shoal's error body and the matching status", () => {
    const cases: [string, string, string][] = [
      ["HPE_HEADER_OVERFLOW", "HTTP/1.1 431 Request Header Fields Too Large", "RequestHeaderFieldsTooLarge"],
      ["ERR_HTTP_REQUEST_TIMEOUT", "HTTP/1.1 408 Request Timeout", "RequestTimeout"],
      ["HPE_INVALID_METHOD", "HTTP/1.1 400 Bad Request", "BadRequest"],
    ];
    for (const [code, statusLine, kind] of cases) {
      const res = parse(clientErrorResponse(error(code)));
      expect(res.statusLine, code).toBe(statusLine);
      expect(res.headers).toContain("Content-Type: application/json");
      expect(res.headers).toContain(`Content-Length: ${res.bodyBytes}`);
      expect(res.body).toMatchObject({
        Status: Number(statusLine.split(" ")[1]),
        Code: kind,
        Component: "orchestrator",
      });
      expect(res.body.RequestID).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});
