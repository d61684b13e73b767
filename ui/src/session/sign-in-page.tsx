import { useState } from "preact/hooks";
import { ApiError } from "../api/client.ts";
import type { Credentials } from "../api/credentials.ts";

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
          <label>
            API key
            <input
              type="password"
              name="api-key"
              autocomplete="off"
              required
              value={key}
              onInput={(e) => setKey(e.currentTarget.value)}
            />
          </label>
        ) : (
          <>
            <label>
              Username
              <input
                name="username"
                autocomplete="username"
                required
                value={username}
                onInput={(e) => setUsername(e.currentTarget.value)}
              />
            </label>
            <label>
              Password
              <input
                type="password"
                name="password"
                autocomplete="current-password"
                required
                value={password}
                onInput={(e) => setPassword(e.currentTarget.value)}
              />
            </label>
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
