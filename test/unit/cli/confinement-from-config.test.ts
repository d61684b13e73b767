import { describe, expect, it } from "vitest";
import { confinementFromConfig } from "../../../src/cli/confinement-from-config.ts";
import { DEFAULT_CONFINEMENT } from "../../../src/compute/executor/container-confinement.ts";
import { defaultConfig, type ShoalConfig } from "../../../src/config/keys.ts";

const config = (over: Partial<ShoalConfig>): ShoalConfig => ({ ...defaultConfig(), ...over });

describe("a compute node's container limits from its config", () => {
  it("defaults to a pids limit of 1024, Shoal's eight capabilities and a writable root", () => {
    expect(confinementFromConfig(defaultConfig())).toEqual(DEFAULT_CONFINEMENT);
    expect(DEFAULT_CONFINEMENT).toEqual({
      pidsLimit: 1024,
      capabilities: ["CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "NET_BIND_SERVICE", "SETGID", "SETUID"],
      readOnlyRootFilesystem: false,
    });
  });

  it("takes capabilities as Docker spells them, in lower case or with CAP_, once each; none at all", () => {
    const named = ["chown", "CAP_NET_RAW", "Cap_Chown"];
    const got = confinementFromConfig(config({ "Compute.Docker.Capabilities": named, "Compute.Docker.PidsLimit": 64 }));
    expect(got).toEqual({ pidsLimit: 64, capabilities: ["CHOWN", "NET_RAW"], readOnlyRootFilesystem: false });
    const none = config({ "Compute.Docker.Capabilities": [], "Compute.Docker.ReadOnlyRootFilesystem": true });
    expect(confinementFromConfig(none)).toMatchObject({ capabilities: [], readOnlyRootFilesystem: true });
  });

  it("refuses a pids limit below 1 and a capability outside Docker's default set, naming the key", () => {
    const zero = config({ "Compute.Docker.PidsLimit": 0 });
    expect(() => confinementFromConfig(zero)).toThrow("Compute.Docker.PidsLimit: must be at least 1, got 0");
    expect(() => confinementFromConfig(config({ "Compute.Docker.Capabilities": ["chown", "sys_admin"] }))).toThrow(
      /^Compute\.Docker\.Capabilities: capabilities SYS_ADMIN are not in Docker's default set \(AUDIT_WRITE, CHOWN, .*SYS_CHROOT\)$/,
    );
  });
});
