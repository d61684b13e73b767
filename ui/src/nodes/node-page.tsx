import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useState } from "preact/hooks";
import { ApiError } from "../api/client.ts";
import { getNode, nodeHistory } from "../api/endpoints.ts";
import type { NodeState } from "../api/types.ts";
import { Countdown, Facts, Labels, Time, actorName, resourcesText } from "../common/format.tsx";
import { LiveStatus, useLiveRefresh } from "../live/use-live-refresh.tsx";
import { useSession } from "../session/session.tsx";
import { NodeActions } from "./node-actions.tsx";
import { NodeBadges } from "./node-badges.tsx";
import { LabelEditor } from "./label-editor.tsx";
import { NodeHistory } from "./node-history.tsx";

const executions = (n: number) => `${n} ${n === 1 ? "execution" : "executions"}`;

/** What the drain still waits for: the orchestrator's count, else (an older server) the node's last report. */
function drainLeftText(left: number | undefined, compute: NodeState["Info"]["ComputeNodeInfo"]): string {
  if (left !== undefined) return `${executions(left)} under way, as the orchestrator counts`;
  return `${executions(compute?.RunningExecutions ?? 0)} running, as the node last reported`;
}

function NodeFacts(props: { readonly node: NodeState }) {
  const { node } = props;
  const compute = node.Info.ComputeNodeInfo;
  const rows: [string, ComponentChildren][] = [
    ["Type", node.Info.NodeType],
    ["Hostname", node.Info.Hostname ?? "—"],
    [
      "Version",
      `${node.Info.BacalhauVersion.GitVersion} (${node.Info.BacalhauVersion.GOOS}/${node.Info.BacalhauVersion.GOARCH})`,
    ],
    ["Connection", node.Connection.toLowerCase()],
    ["Last heartbeat", <Time at={node.ConnectionState.LastHeartbeat} />],
    ["Revision", node.Revision],
  ];
  if (node.Cordon !== undefined)
    rows.push([
      "Cordoned",
      <>
        since <Time at={node.Cordon.Since} /> by {actorName(node.Cordon.By)}: {node.Cordon.Reason || "no reason given"}
      </>,
    ]);
  if (node.Drain !== undefined)
    rows.push([
      "Drain",
      <>
        {node.Drain.Status}, deadline <Time at={node.Drain.Deadline} />
        {node.Drain.Status === "draining" ? (
          <>
            {" "}
            (<Countdown at={node.Drain.Deadline} />, {drainLeftText(node.Drain.ExecutionsLeft, compute)})
          </>
        ) : null}
        , by {actorName(node.Drain.By)}: {node.Drain.Reason || "no reason given"}
        {node.Drain.Left === undefined
          ? null
          : `; ${node.Drain.Left} ${node.Drain.Left === 1 ? "execution" : "executions"} stopped at the deadline`}
      </>,
    ]);
  if (compute !== undefined) {
    rows.push(
      ["Engines", compute.ExecutionEngines.join(", ") || "—"],
      ["Capacity", resourcesText(compute.MaxCapacity)],
      ["Available", resourcesText(compute.AvailableCapacity)],
      ["Largest job", resourcesText(compute.MaxJobRequirements)],
      ["Executions", `${compute.RunningExecutions} running, ${compute.EnqueuedExecutions} queued`],
    );
  }
  return <Facts rows={rows} />;
}

/** One node: its state, resources and labels, the operator's actions, and its history with who and why. */
export function NodePage(props: { readonly id: string }) {
  const session = useSession();
  const readsHistory = session.can("read:history");
  const [node, setNode] = useState<NodeState | undefined>();
  const [history, setHistory] = useState<Awaited<ReturnType<typeof nodeHistory>> | undefined>();
  const [error, setError] = useState<string | undefined>();

  const load = useCallback(async () => {
    try {
      const [state, events] = await Promise.all([
        getNode(session.client, props.id),
        readsHistory ? nodeHistory(session.client, props.id) : undefined,
      ]);
      setNode(state);
      setHistory(events);
      setError(undefined);
    } catch (e) {
      setError(e instanceof ApiError ? e.message : String(e));
    }
  }, [session, props.id, readsHistory]);

  useEffect(() => void load(), [load]);
  const mode = useLiveRefresh(session, `category=node&entity=${encodeURIComponent(props.id)}`, () => void load());

  return (
    <main>
      <p class="crumbs">
        <a href="/ui/nodes">Nodes</a> /
      </p>
      <h1>{props.id}</h1>
      <LiveStatus mode={mode} failed={error !== undefined} />
      {error === undefined ? null : (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {node === undefined ? (
        error === undefined ? (
          <p class="loading">Loading…</p>
        ) : null
      ) : (
        <>
          <NodeBadges node={node} />
          <NodeActions node={node} onDone={() => void load()} />
          <div class="columns">
            <section aria-labelledby="facts-title">
              <h2 id="facts-title">Node</h2>
              <NodeFacts node={node} />
            </section>
            <section aria-labelledby="labels-title">
              <h2 id="labels-title">Labels</h2>
              <Labels labels={node.Info.Labels} />
              {Object.keys(node.OperatorLabels.Set).length + node.OperatorLabels.Removed.length === 0 ? null : (
                <p class="muted">
                  Set by operators: {Object.keys(node.OperatorLabels.Set).join(", ") || "none"}; hidden:{" "}
                  {node.OperatorLabels.Removed.join(", ") || "none"}
                </p>
              )}
              <LabelEditor nodeId={node.Info.NodeID} onDone={() => void load()} />
            </section>
          </div>
          {history === undefined ? (
            <p class="muted">The history (who did what and why) needs the read:history capability.</p>
          ) : (
            <NodeHistory events={history.events} complete={history.complete} />
          )}
        </>
      )}
    </main>
  );
}
