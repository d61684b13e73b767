import { expect, it } from "vitest";
import { newPair } from "../../../../src/security/tls/certificate-pair.ts";

const DAY = 24 * 3600 * 1000;

it("issues no certificate that outlives its CA, and the full validity under a CA that lasts longer", () => {
  const now = new Date("2026-01-01T00:00:00Z");
  const shortCa = newPair("short-lived CA", now, 10 * DAY, undefined, []);
  const leaf = newPair("nats-1", now, 365 * DAY, shortCa, ["nats-1"]);
  expect(new Date(leaf.certificate.validTo).getTime()).toBe(new Date(shortCa.certificate.validTo).getTime());
  expect(leaf.certificate.checkIssued(shortCa.certificate)).toBe(true);

  const longCa = newPair("long-lived CA", now, 3650 * DAY, undefined, []);
  const full = newPair("nats-2", now, 365 * DAY, longCa, ["nats-2"]);
  // X.509 times are whole seconds.
  expect(Math.abs(new Date(full.certificate.validTo).getTime() - (now.getTime() + 365 * DAY))).toBeLessThan(1000);
});
