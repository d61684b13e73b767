import { describe, expect, it } from "vitest";
import { metricsListenOf } from "../../../src/compute/metrics-listen-of.ts";
import { ConfigError } from "../../../src/config/config-error.ts";
import { defaultConfig } from "../../../src/config/keys.ts";

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
});
