import { LocationProvider, Route, Router, useLocation } from "preact-iso";
import { useEffect } from "preact/hooks";
import { AuditPage } from "./audit/audit-page.tsx";
import { JobPage } from "./jobs/job-page.tsx";
import { JobsPage } from "./jobs/jobs-page.tsx";
import { SubmitJobPage } from "./jobs/submit-job-page.tsx";
import { NodePage } from "./nodes/node-page.tsx";
import { NodesPage } from "./nodes/nodes-page.tsx";
import { PreauthorizationPage } from "./preauthorization/preauthorization-page.tsx";
import { SessionProvider, useSession } from "./session/session.tsx";
import { HOME, returnPath, signInHref } from "./session/return-path.ts";
import { SignInPage } from "./session/sign-in-page.tsx";

/** The signed-in caller, and a way to sign in (anonymous) or out. */
function Who() {
  const session = useSession();
  const { route, url } = useLocation();
  if (session.whoami.Anonymous)
    return (
      <span class="who">
        Anonymous (read only){" "}
        <button type="button" class="link" onClick={() => route(signInHref(url))}>
          Sign in
        </button>
      </span>
    );
  return (
    <span class="who">
      Signed in as <strong>{session.whoami.Id}</strong>{" "}
      <button type="button" class="link" onClick={session.signOut}>
        Sign out
      </button>
    </span>
  );
}

function Header() {
  const session = useSession();
  return (
    <header class="top">
      <a class="brand" href="/ui/nodes">
        Shoal
      </a>
      <nav aria-label="Main">
        <a href="/ui/nodes">Nodes</a>
        {session.can("write:node") ? <a href="/ui/preauthorized">Pre-authorised</a> : null}
        <a href="/ui/jobs">Jobs</a>
        <a href="/ui/audit">Audit</a>
      </nav>
      <Who />
    </header>
  );
}

/**
 * Signing in from an anonymous session (anonymous read is allowed, so the console was shown without it), then back
 * to the page the reader was on.
 */
function SignInRoute() {
  const session = useSession();
  const { route, query } = useLocation();
  const next = returnPath(query["next"]);
  return (
    <SignInPage
      signIn={async (credentials) => {
        await session.signIn(credentials);
        route(next);
      }}
      onCancel={() => route(next)}
    />
  );
}

function Home() {
  const { route } = useLocation();
  useEffect(() => route(HOME, true), [route]);
  return null;
}

function NotFound() {
  return (
    <main>
      <h1>Not found</h1>
      <p>
        No such page in the console. <a href="/ui/nodes">Nodes</a>
      </p>
    </main>
  );
}

// A folder per page (nodes/, preauthorization/, jobs/, audit/), each a route here.
export function App() {
  return (
    <LocationProvider scope="/ui">
      <SessionProvider signInPage={(control) => <SignInPage {...control} />}>
        <Header />
        <Router>
          <Route path="/ui/" component={Home} />
          <Route path="/ui/sign-in" component={SignInRoute} />
          <Route path="/ui/nodes" component={NodesPage} />
          <Route path="/ui/nodes/:id" component={NodePage} />
          <Route path="/ui/preauthorized" component={PreauthorizationPage} />
          <Route path="/ui/jobs" component={JobsPage} />
          <Route path="/ui/jobs/new" component={SubmitJobPage} />
          <Route path="/ui/jobs/:id" component={JobPage} />
          <Route path="/ui/audit" component={AuditPage} />
          <Route default component={NotFound} />
        </Router>
      </SessionProvider>
    </LocationProvider>
  );
}
