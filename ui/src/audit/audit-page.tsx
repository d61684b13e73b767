import { useSession } from "../session/session.tsx";
import { AuditDiffView } from "./audit-diff-view.tsx";
import { AuditFeed } from "./audit-feed.tsx";
import { NodesAsOf } from "./nodes-as-of.tsx";

/**
 * The audit trail: the cluster-wide feed, the nodes as of a moment, and what changed between two moments. The feed
 * and the diff need read:history.
 */
export function AuditPage() {
  const session = useSession();
  return (
    <main>
      <h1>Audit</h1>
      {session.can("read:history") ? (
        <>
          <AuditFeed />
          <NodesAsOf />
          <AuditDiffView />
        </>
      ) : (
        <>
          <p>The event feed and the changes between two moments need the read:history capability.</p>
          <NodesAsOf />
        </>
      )}
    </main>
  );
}
