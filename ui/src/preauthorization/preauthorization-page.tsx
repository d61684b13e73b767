import { useCallback, useEffect, useState } from "preact/hooks";
import { Time, ErrorAlert, errorText } from "../common/format.tsx";
import { DataTable } from "../common/data-table.tsx";
import { UpdateOutcome } from "../common/outcome.tsx";
import { LiveStatus, useLiveRefresh } from "../live/use-live-refresh.tsx";
import { useNodeUpdate } from "../nodes/use-node-update.tsx";
import { useSession } from "../session/session.tsx";
import { PREAUTHORIZATION_TYPES, JOINED_TYPE, type Preauthorization } from "./preauthorizations.ts";
import { readPreauthorizations } from "./read-preauthorizations.ts";

/** The events that change the list: the stream's filter. */
const LIVE_FILTER = `category=node&type=${[...PREAUTHORIZATION_TYPES, JOINED_TYPE].join(",")}`;

/** A node id to let in before it joins: with its NATS key (optional) and a reason. */
function PreauthorizeForm(props: { readonly onDone: () => void }) {
  const [id, setId] = useState("");
  const [key, setKey] = useState("");
  const [reason, setReason] = useState("");
  const { busy, submit, outcome } = useNodeUpdate(id.trim(), props.onDone);
  return (
    <form
      class="filters"
      aria-label="Pre-authorise a node"
      onSubmit={(e) => {
        e.preventDefault();
        void submit(
          {
            Action: "preauthorize",
            ...(key.trim() === "" ? {} : { PublicKey: key.trim() }),
            ...(reason.trim() === "" ? {} : { Message: reason.trim() }),
          },
          `Pre-authorised ${id.trim()}`,
          () => {
            setId("");
            setKey("");
            setReason("");
          },
        );
      }}
    >
      <label>
        Node id
        <input required value={id} placeholder="rack7-n1" onInput={(e) => setId(e.currentTarget.value)} />
      </label>
      <label>
        Public key (optional)
        <input value={key} placeholder="U… (compute --show-key)" onInput={(e) => setKey(e.currentTarget.value)} />
      </label>
      <label>
        Reason
        <input
          value={reason}
          maxLength={1024}
          placeholder="recorded in the history"
          onInput={(e) => setReason(e.currentTarget.value)}
        />
      </label>
      <button type="submit" disabled={busy || id.trim() === ""}>
        Pre-authorise
      </button>
      <UpdateOutcome outcome={outcome} />
    </form>
  );
}

/** Revokes one id's pre-authorisation, with a reason. */
function RevokeForm(props: { readonly nodeId?: string; readonly onDone: () => void }) {
  const [typed, setTyped] = useState("");
  const [reason, setReason] = useState("");
  const id = props.nodeId ?? typed.trim();
  const { busy, submit, outcome } = useNodeUpdate(id, props.onDone);
  return (
    <form
      class="revoke"
      aria-label={props.nodeId === undefined ? "Revoke a pre-authorisation" : `Revoke ${props.nodeId}`}
      onSubmit={(e) => {
        e.preventDefault();
        void submit(
          { Action: "revoke-preauthorization", ...(reason.trim() === "" ? {} : { Message: reason.trim() }) },
          `Revoked ${id}`,
          () => {
            setTyped("");
            setReason("");
          },
        );
      }}
    >
      {props.nodeId === undefined ? (
        <label>
          Node id
          <input required value={typed} onInput={(e) => setTyped(e.currentTarget.value)} />
        </label>
      ) : null}
      <label>
        Reason
        <input
          aria-label={`Reason for revoking ${id}`}
          value={reason}
          maxLength={1024}
          placeholder="recorded in the history"
          onInput={(e) => setReason(e.currentTarget.value)}
        />
      </label>
      <button type="submit" class="danger" disabled={busy || id === ""} aria-label={`Revoke ${id}`}>
        Revoke
      </button>
      <UpdateOutcome outcome={outcome} />
    </form>
  );
}

/** The ids waiting to join, from the feed (the API has no list of them); needs read:history. */
function PreauthorizedList(props: { readonly version: number; readonly onDone: () => void }) {
  const session = useSession();
  const [items, setItems] = useState<readonly Preauthorization[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const load = useCallback(async () => {
    try {
      setItems(await readPreauthorizations(session.client));
      setError(undefined);
    } catch (e) {
      setError(errorText(e));
    }
  }, [session]);
  useEffect(() => void load(), [load, props.version]);
  const mode = useLiveRefresh(session, LIVE_FILTER, () => void load());
  return (
    <section aria-labelledby="preauthorized-title">
      <h2 id="preauthorized-title">Waiting to join</h2>
      <LiveStatus mode={mode} failed={error !== undefined} />
      <ErrorAlert message={error} />
      {items === undefined ? (
        <p class="loading">Loading…</p>
      ) : (
        <DataTable
          caption="Pre-authorised node ids that have not joined"
          class="preauthorized"
          columns={["Node", "Public key", "Reason", "By", "When", "Revoke"]}
          items={items}
          empty="No node id is pre-authorised and waiting to join."
          row={(p) => (
            <tr key={p.nodeId}>
              <th scope="row">{p.nodeId}</th>
              <td>
                {p.publicKey === undefined ? <span class="muted">any (the id alone)</span> : <code>{p.publicKey}</code>}
              </td>
              <td>{p.reason}</td>
              <td>{p.by}</td>
              <td>
                <Time at={p.at} />
              </td>
              <td>
                <RevokeForm nodeId={p.nodeId} onDone={props.onDone} />
              </td>
            </tr>
          )}
        />
      )}
    </section>
  );
}

/**
 * Pre-authorised join (docs/nodes.md): node ids let in before they exist, each with who, when and why; revoke one
 * with a reason. For callers with write:node only.
 */
export function PreauthorizationPage() {
  const session = useSession();
  const [version, setVersion] = useState(0);
  const reload = () => setVersion((v) => v + 1);
  if (!session.can("write:node"))
    return (
      <main>
        <h1>Pre-authorised nodes</h1>
        <p>Pre-authorising nodes needs the write:node capability.</p>
      </main>
    );
  return (
    <main>
      <h1>Pre-authorised nodes</h1>
      <p class="hint">
        Under manual approval a node id pre-authorised here registers approved; with a public key, only a node joining
        with that key does.
      </p>
      <PreauthorizeForm onDone={reload} />
      {session.can("read:history") ? (
        <PreauthorizedList version={version} onDone={reload} />
      ) : (
        <section aria-labelledby="revoke-title">
          <h2 id="revoke-title">Revoke</h2>
          <p>
            The API keeps no list of pre-authorised ids: the console reads them from the event feed, which needs the
            read:history capability. An id named here can still be revoked.
          </p>
          <RevokeForm onDone={reload} />
        </section>
      )}
    </main>
  );
}
