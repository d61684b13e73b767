import type { NodeState } from "../api/types.ts";

/** Approval, health, cordon and drain at a glance; words, not only colours. */
export function NodeBadges(props: { readonly node: NodeState }) {
  const { node } = props;
  return (
    <span class="badges">
      <span class={`badge membership-${node.Membership.toLowerCase()}`}>{node.Membership.toLowerCase()}</span>
      <span class={`badge health-${node.Health.toLowerCase()}`}>{node.Health.toLowerCase()}</span>
      {node.Cordoned ? <span class="badge cordoned">cordoned</span> : null}
      {node.Drain === undefined ? null : <span class="badge drain">{node.Drain.Status}</span>}
    </span>
  );
}
