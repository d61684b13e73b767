import { request } from "node:https";

/** GET `url` over HTTPS trusting `ca` (PEM) and parse the JSON answer: what fetch cannot do with a private CA. */
export function getJsonOverHttps(url: string, ca: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca }, (res) => {
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
