import type { GoPlatform } from "./go-platform.ts";
import { labelValueProblem } from "./label-rule.ts";

/**
 * The labels every node reports about itself, under the keys of Bacalhau 1.8 and later (`name`, `os_type`,
 * `os_arch`: pkg/node/labels.go) and of the versions before (`Operating-System`, `Architecture`), so that specs
 * written for either are placed. Values in Go's words (`linux`, `amd64`). `name` is the node id, left out when the
 * id is not a valid label value (longer than 63 characters, or ending in '-' or '_').
 */
export function builtInLabels(nodeId: string, platform: GoPlatform): Record<string, string> {
  return {
    ...(labelValueProblem(nodeId) === undefined ? { name: nodeId } : {}),
    os_type: platform.GOOS,
    os_arch: platform.GOARCH,
    "Operating-System": platform.GOOS,
    Architecture: platform.GOARCH,
  };
}
