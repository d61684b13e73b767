import { useSession } from "../session/session.tsx";
import { AuditDiffView } from "./audit-diff-view.tsx";
import { AuditFeed } from "./audit-feed.tsx";
import { ChainVerification } from "./chain-verification.tsx";
import { NodesAsOf } from "./nodes-as-of.tsx";

/**
 * The audit trail: the cluster-wide feed, the nodes as of a moment, what changed between two moments, and whether the
 * history was altered. All but the nodes as of a moment need read:history.
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
          <ChainVerification />
        </>
      ) : (
        <>
          <p>
            The event feed, the changes between two moments and the check that the history was not altered need the
            read:history capability.
          </p>
          <NodesAsOf />
        </>
      )}
    </main>
  );
}
