import type { LookupFunction } from "node:net";
import { request } from "node:https";

/**
 * GET `url` over HTTPS trusting `ca` (PEM) and parse the JSON answer: what fetch cannot do with a private CA. With
 * `address`, the URL's host resolves to that address alone, as a resolver that gives it first would have it (the
 * certificate is still checked against the URL's host).
 */
export function getJsonOverHttps(
  url: string,
  ca: string,
  options: { readonly address?: string } = {},
): Promise<unknown> {
  const { address } = options;
  const lookup: LookupFunction | undefined =
    address === undefined
      ? undefined
      : (_host, lookupOptions, answer) => {
          const family = address.includes(":") ? 6 : 4;
          if (lookupOptions.all) answer(null, [{ address, family }]);
          else answer(null, address, family);
        };
  return new Promise((resolve, reject) => {
    const req = request(url, { ca, ...(lookup ? { lookup } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.once("end", () => {
        try {
          resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")));
        } catch (e) {
          reject(e as Error);
        }
      });
      res.once("error", reject);
    });
    req.once("error", reject);
    req.end();
  });
}
