import { describe, expect, it } from "vitest";
import { resultRetentionFromConfig } from "../../../src/cli/result-retention-from-config.ts";
import { defaultConfig, type ShoalConfig } from "../../../src/config/keys.ts";
import { configFrom } from "../../../src/cli/config-flags.ts";

const config = (over: Partial<ShoalConfig>): ShoalConfig => ({ ...defaultConfig(), ...over });

describe("a compute node's retention of its results, from its config", () => {
  it("keeps results a week and at most 10 GiB by default; 0 turns either limit off", () => {
    expect(resultRetentionFromConfig(defaultConfig())).toEqual({
      periodMs: 7 * 86_400_000,
      maxTotalBytes: 10 * 2 ** 30,
    });
    const off = config({ "Compute.Publishers.Local.RetentionPeriod": 0, "Compute.Publishers.Local.MaxTotalBytes": 0 });
    expect(resultRetentionFromConfig(off)).toEqual({ periodMs: 0, maxTotalBytes: 0 });
  });

  it("reads the keys as durations and sizes, refusing what is neither", () => {
    const set = ["Compute.Publishers.Local.RetentionPeriod=36h", "Compute.Publishers.Local.MaxTotalBytes=2GiB"];
    expect(resultRetentionFromConfig(configFrom({ c: set }))).toEqual({
      periodMs: 36 * 3_600_000,
      maxTotalBytes: 2 ** 31,
    });
    expect(() => configFrom({ c: ["Compute.Publishers.Local.RetentionPeriod=a week"] })).toThrow(
      /Compute\.Publishers\.Local\.RetentionPeriod: expected a duration such as 15s/,
    );
    expect(() => configFrom({ c: ["Compute.Publishers.Local.MaxTotalBytes=-1"] })).toThrow(
      /Compute\.Publishers\.Local\.MaxTotalBytes: expected a size such as 512MiB/,
    );
  });

  it("refuses a period under a minute and a total below one execution's results, naming the key", () => {
    expect(() => resultRetentionFromConfig(config({ "Compute.Publishers.Local.RetentionPeriod": 30_000 }))).toThrow(
      /^Compute\.Publishers\.Local\.RetentionPeriod: at least 1m .* or 0s for no age limit; got 30000ms$/,
    );
    const small = config({ "Compute.Publishers.Local.MaxTotalBytes": 1024 ** 2 });
    expect(() => resultRetentionFromConfig(small)).toThrow(
      "Compute.Publishers.Local.MaxTotalBytes: 1MiB is less than one execution may publish " +
        "(Compute.Publishers.MaxResultBytes, 100MiB)",
    );
  });
});
