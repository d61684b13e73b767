import type { HealthOverride } from "../config/keys.ts";
import { matchesLabels, parseLabelSelector, type LabelSelector } from "../labels/label-selector.ts";

export interface Thresholds {
  readonly disconnectMs: number;
  readonly unknownMs: number;
}

/**
 * Health thresholds per node, per group of nodes (label selector) or by default: a node's own
 * entry wins over groups, the first matching group wins over the default, and any field an
 * entry leaves out falls through to the next level.
 */
export class HealthThresholds {
  private readonly groups: { selector: LabelSelector; override: HealthOverride }[];
  private readonly byNode = new Map<string, HealthOverride>();

  constructor(
    private readonly defaults: Thresholds,
    overrides: readonly HealthOverride[] = [],
  ) {
    this.groups = overrides
      .filter((o) => o.Selector !== undefined)
      .map((o) => ({ selector: parseLabelSelector(o.Selector as string), override: o }));
    for (const o of overrides) for (const id of o.NodeIDs ?? []) if (!this.byNode.has(id)) this.byNode.set(id, o);
  }

  for(nodeId: string, labels: Readonly<Record<string, string>>): Thresholds {
    const node = this.byNode.get(nodeId);
    const group = this.groups.find((g) => matchesLabels(g.selector, labels))?.override;
    const disconnectMs = node?.DisconnectTimeout ?? group?.DisconnectTimeout ?? this.defaults.disconnectMs;
    const unknownMs = node?.UnknownTimeout ?? group?.UnknownTimeout ?? this.defaults.unknownMs;
    // UNKNOWN is measured from the same last heartbeat, so it can never come before UNHEALTHY.
    return { disconnectMs, unknownMs: Math.max(unknownMs, disconnectMs) };
  }
}
