import { createContext, type ComponentChildren } from "preact";
import { useCallback, useContext, useEffect, useMemo, useState } from "preact/hooks";
import { ApiClient, ApiError } from "../api/client.ts";
import { forgetCredentials, loadCredentials, saveCredentials, type Credentials } from "../api/credentials.ts";
import { whoami as fetchWhoami } from "../api/endpoints.ts";
import type { Capability, Whoami } from "../api/types.ts";

export interface Session {
  readonly client: ApiClient;
  readonly whoami: Whoami;
  /** Whether the caller holds the capability: what the console shows, hides or disables. */
  readonly can: (capability: Capability) => boolean;
  readonly signIn: (credentials: Credentials) => Promise<void>;
  readonly signOut: () => void;
}

type State =
  | { readonly phase: "loading" }
  | { readonly phase: "ready"; readonly client: ApiClient; readonly whoami: Whoami }
  /** No usable credentials, and anonymous callers may not read (or the stored ones were refused). */
  | { readonly phase: "signed-out"; readonly problem?: string };

const SessionContext = createContext<Session | undefined>(undefined);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (session === undefined) throw new Error("useSession outside a signed-in SessionProvider");
  return session;
}

/** What the sign-in page needs while there is no session yet. */
export interface SignInControl {
  readonly signIn: (credentials: Credentials) => Promise<void>;
  /** Why the stored credentials no longer work. */
  readonly problem?: string;
}

/**
 * Asks the API who the stored credentials (or no credentials) name. Signed in, or anonymous where the API lets
 * anonymous callers read: the children. Otherwise: `signInPage`.
 */
export function SessionProvider(props: {
  readonly children: ComponentChildren;
  readonly signInPage: (control: SignInControl) => ComponentChildren;
}) {
  const [state, setState] = useState<State>({ phase: "loading" });

  const start = useCallback(async (credentials: Credentials | undefined) => {
    const client = new ApiClient(credentials);
    const who = await fetchWhoami(client);
    if (who.Anonymous && who.AnonymousAccess === "none") setState({ phase: "signed-out" });
    else setState({ phase: "ready", client, whoami: who });
  }, []);

  useEffect(() => {
    start(loadCredentials()).catch((e: unknown) => {
      forgetCredentials();
      const problem = e instanceof ApiError ? e.message : String(e);
      setState({ phase: "signed-out", problem });
    });
  }, [start]);

  const signIn = useCallback(async (credentials: Credentials) => {
    const client = new ApiClient(credentials);
    const who = await fetchWhoami(client);
    saveCredentials(credentials);
    setState({ phase: "ready", client, whoami: who });
  }, []);

  const signOut = useCallback(() => {
    forgetCredentials();
    start(undefined).catch((e: unknown) => setState({ phase: "signed-out", problem: String(e) }));
  }, [start]);

  const session = useMemo<Session | undefined>(
    () =>
      state.phase !== "ready"
        ? undefined
        : {
            client: state.client,
            whoami: state.whoami,
            can: (capability) => state.whoami.Capabilities.includes(capability),
            signIn,
            signOut,
          },
    [state, signIn, signOut],
  );

  if (state.phase === "loading") return <p class="loading">Loading…</p>;
  if (state.phase === "signed-out")
    return <>{props.signInPage({ signIn, ...(state.problem === undefined ? {} : { problem: state.problem }) })}</>;
  return <SessionContext.Provider value={session}>{props.children}</SessionContext.Provider>;
}
