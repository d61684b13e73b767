import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError } from "../api/client.ts";
import type { Credentials } from "../api/credentials.ts";

/** A required text field with its visible label; a secret one is masked. */
function Field(props: {
  readonly label: string;
  readonly name: string;
  readonly secret?: boolean;
  readonly autocomplete: string;
  readonly value: string;
  readonly onInput: (value: string) => void;
  /** Takes the focus when shown: the page's first field (a page drawn by script has no autofocus of its own). */
  readonly first?: boolean;
}) {
  const ref = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (props.first === true) ref.current?.focus();
  }, [props.first]);
  const input = {
    ref,
    name: props.name,
    autocomplete: props.autocomplete,
    required: true,
    value: props.value,
    onInput: (e: { currentTarget: HTMLInputElement }) => props.onInput(e.currentTarget.value),
  };
  return (
    <label>
      {props.label}
      {props.secret === true ? <input type="password" {...input} /> : <input {...input} />}
    </label>
  );
}

/**
 * An API key, or a username and password from API.Auth.Users. The credentials are checked (whoami) before they are
 * kept; a wrong one says so and keeps nothing.
 */
export function SignInPage(props: {
  readonly signIn: (credentials: Credentials) => Promise<void>;
  readonly problem?: string;
  readonly onCancel?: () => void;
}) {
  const [kind, setKind] = useState<Credentials["kind"]>("key");
  const [key, setKey] = useState("");
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState(props.problem);
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await props.signIn(kind === "key" ? { kind, key: key.trim() } : { kind, username: username.trim(), password });
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
      setBusy(false);
    }
  };

  return (
    <main class="sign-in">
      <h1>Sign in to Shoal</h1>
      <form onSubmit={submit} aria-describedby={error === undefined ? undefined : "sign-in-error"}>
        <fieldset>
          <legend>Credentials</legend>
          <label class="inline">
            <input type="radio" name="kind" checked={kind === "key"} onChange={() => setKind("key")} /> API key
          </label>
          <label class="inline">
            <input type="radio" name="kind" checked={kind === "password"} onChange={() => setKind("password")} />{" "}
            Username and password
          </label>
        </fieldset>
        {kind === "key" ? (
          <Field label="API key" name="api-key" secret autocomplete="off" value={key} onInput={setKey} first />
        ) : (
          <>
            <Field
              label="Username"
              name="username"
              autocomplete="username"
              value={username}
              onInput={setUsername}
              first
            />
            <Field
              label="Password"
              name="password"
              secret
              autocomplete="current-password"
              value={password}
              onInput={setPassword}
            />
          </>
        )}
        {error === undefined ? null : (
          <p id="sign-in-error" class="error" role="alert">
            {error}
          </p>
        )}
        <div class="buttons">
          <button type="submit" disabled={busy}>
            Sign in
          </button>
          {props.onCancel ? (
            <button type="button" class="secondary" onClick={props.onCancel}>
              Cancel
            </button>
          ) : null}
        </div>
        <p class="hint">
          With no users configured, <code>shoal serve</code> keeps an admin API key in{" "}
          <code>&lt;DataDir&gt;/credentials/api-admin-key</code>. The key stays in this tab only, until you sign out or
          close it.
        </p>
      </form>
    </main>
  );
}
