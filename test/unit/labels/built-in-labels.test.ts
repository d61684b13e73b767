import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { computeNodeInfo } from "../../../src/compute/machine-info.ts";
import { builtInLabels } from "../../../src/labels/built-in-labels.ts";
import { goPlatform, machinePlatform } from "../../../src/labels/go-platform.ts";
import { BUILT_IN_LABEL_KEYS } from "../../../src/labels/label-rule.ts";
import { virtualNodeInfo } from "../../../src/sim/virtual-node-info.ts";
import { buildVersion } from "../../../src/version.ts";

const LINUX_AMD64 = { GOOS: "linux", GOARCH: "amd64" };

describe("Go's platform words", () => {
  it.each([
    ["linux", "x64", "LE", "linux", "amd64"],
    ["linux", "arm64", "LE", "linux", "arm64"],
    ["linux", "ia32", "LE", "linux", "386"],
    ["linux", "arm", "LE", "linux", "arm"],
    ["linux", "mipsel", "LE", "linux", "mipsle"],
    ["linux", "ppc64", "LE", "linux", "ppc64le"],
    ["aix", "ppc64", "BE", "aix", "ppc64"],
    ["linux", "s390x", "BE", "linux", "s390x"],
    ["linux", "riscv64", "LE", "linux", "riscv64"],
    ["darwin", "arm64", "LE", "darwin", "arm64"],
    ["win32", "x64", "LE", "windows", "amd64"],
    ["sunos", "x64", "LE", "solaris", "amd64"],
    ["freebsd", "x64", "LE", "freebsd", "amd64"],
  ] as const)("%s/%s (%s) is %s/%s", (platform, arch, order, GOOS, GOARCH) => {
    expect(goPlatform(platform, arch, order)).toEqual({ GOOS, GOARCH });
  });

  it("never reports Node's own x64 or win32 for this machine", () => {
    const { GOOS, GOARCH } = machinePlatform();
    expect(GOARCH).not.toBe("x64");
    expect(GOOS).not.toBe("win32");
    expect(buildVersion()).toMatchObject({ GOOS, GOARCH });
  });
});

describe("built-in labels", () => {
  it("are Bacalhau 1.8+'s name, os_type, os_arch and the older Operating-System, Architecture", () => {
    expect(builtInLabels("n-1", LINUX_AMD64)).toEqual({
      name: "n-1",
      os_type: "linux",
      os_arch: "amd64",
      "Operating-System": "linux",
      Architecture: "amd64",
    });
    expect(Object.keys(builtInLabels("n-1", LINUX_AMD64))).toEqual([...BUILT_IN_LABEL_KEYS]);
  });

  it("leave name out for a node id that is no label value", () => {
    expect(builtInLabels("n".repeat(64), LINUX_AMD64)).not.toHaveProperty("name");
    expect(builtInLabels("node_", LINUX_AMD64)).not.toHaveProperty("name");
  });

  it("are what a compute node and a simulated node report, with configured labels over them", () => {
    const info = computeNodeInfo("edge-1", { zone: "a", os_type: "custom" }, tmpdir());
    expect(info.Labels).toEqual({ ...builtInLabels("edge-1", machinePlatform()), zone: "a", os_type: "custom" });
    expect(info.BacalhauVersion).toMatchObject(machinePlatform());
    expect(virtualNodeInfo("sim-1", 1).Labels).toMatchObject(builtInLabels("sim-1", LINUX_AMD64));
  });
});
