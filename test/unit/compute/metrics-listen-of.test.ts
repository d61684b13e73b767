import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { metricsListenOf } from "../../../src/compute/metrics-listen-of.ts";
import { ConfigError } from "../../../src/config/config-error.ts";
import { defaultConfig, type ShoalConfig } from "../../../src/config/keys.ts";
import { tempDir } from "../../support/fixtures.ts";

const TOKEN = "c2hvYWwtbWV0cmljcy10b2tlbi0wMTIz+/=";
const serving = (extra: Partial<ShoalConfig>): ShoalConfig => ({
  ...defaultConfig(),
  "Compute.Metrics.Port": 9464,
  ...extra,
});
/** A file holding `text` (mode 0600 unless said), its path. */
const tokenFile = (text: string): string => {
  const file = join(tempDir(), "metrics-token");
  writeFileSync(file, text, { mode: 0o600 });
  return file;
};

describe("metricsListenOf", () => {
  it("serves no /metrics by default, and on Compute.Metrics.Host:Port once the port is set", () => {
    expect(metricsListenOf(defaultConfig())).toEqual({});
    expect(metricsListenOf({ ...defaultConfig(), "Compute.Metrics.Port": 9464 })).toEqual({
      metrics: { host: "0.0.0.0", port: 9464 },
    });
  });

  it("refuses a port that is not one, naming the key", () => {
    for (const port of [-1, 65536, 1.5])
      expect(() => metricsListenOf({ ...defaultConfig(), "Compute.Metrics.Port": port })).toThrow(
        new ConfigError(`Compute.Metrics.Port: ${port} is not a port (0 to 65535; 0: no /metrics)`),
      );
  });

  it("takes the bearer token from Compute.Metrics.BearerToken, or from the file BearerTokenFile names, trimmed", () => {
    expect(metricsListenOf(serving({ "Compute.Metrics.BearerToken": TOKEN }))).toEqual({
      metrics: { host: "0.0.0.0", port: 9464, bearerToken: TOKEN },
    });
    const file = tokenFile(`  ${TOKEN}\n`);
    expect(metricsListenOf(serving({ "Compute.Metrics.BearerTokenFile": file }))).toEqual({
      metrics: { host: "0.0.0.0", port: 9464, bearerToken: TOKEN },
    });
  });

  it("refuses a token file it cannot read at start, naming the key and the file", () => {
    const missing = join(tempDir(), "no-such-token");
    expect(() => metricsListenOf(serving({ "Compute.Metrics.BearerTokenFile": missing }))).toThrow(
      new ConfigError(
        `Compute.Metrics.BearerTokenFile: cannot read ${missing}: ENOENT: no such file or directory, open '${missing}'`,
      ),
    );
    // Also with no port: a config that names an unreadable file is wrong whether or not it serves now.
    expect(() => metricsListenOf({ ...defaultConfig(), "Compute.Metrics.BearerTokenFile": missing })).toThrow(
      /^Compute\.Metrics\.BearerTokenFile: cannot read /,
    );
    // A directory where the file should be: unreadable whoever runs it.
    const directory = tempDir();
    expect(() => metricsListenOf(serving({ "Compute.Metrics.BearerTokenFile": directory }))).toThrow(
      new ConfigError(
        `Compute.Metrics.BearerTokenFile: cannot read ${directory}: EISDIR: illegal operation on a directory, read`,
      ),
    );
  });

  it("refuses an empty token file, a token no Authorization header can carry, and both keys at once", () => {
    const empty = tokenFile(" \n");
    expect(() => metricsListenOf(serving({ "Compute.Metrics.BearerTokenFile": empty }))).toThrow(
      new ConfigError(`Compute.Metrics.BearerTokenFile (${empty}): the token is empty`),
    );
    const spaced = "two words";
    let refusal: unknown;
    try {
      metricsListenOf(serving({ "Compute.Metrics.BearerToken": spaced }));
    } catch (e) {
      refusal = e;
    }
    expect(refusal).toBeInstanceOf(ConfigError);
    expect((refusal as Error).message).toMatch(/^Compute\.Metrics\.BearerToken: the token must be letters, digits/);
    // A secret is never echoed.
    expect((refusal as Error).message).not.toContain(spaced);
    expect(() =>
      metricsListenOf(
        serving({ "Compute.Metrics.BearerToken": TOKEN, "Compute.Metrics.BearerTokenFile": tokenFile(TOKEN) }),
      ),
    ).toThrow(
      new ConfigError("Compute.Metrics.BearerToken and Compute.Metrics.BearerTokenFile: set one of them, not both"),
    );
  });
});
