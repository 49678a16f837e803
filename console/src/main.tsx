/** The console's entry: the session, the sign-in page, the shell (header, navigation) and the routes. */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, session as readSession, setSession, signInWithCode, signOut, type Session } from './api.js';
import { Link, Problem, navigate, paths, usePath } from './ui.js';
import { Overview } from './pages/overview.js';
import { ServicePage } from './pages/service.js';
import { WorkflowPage } from './pages/workflow.js';
import { ApprovalsPage } from './pages/approvals.js';
import { AuditPage } from './pages/audit.js';
import { TenantPage } from './pages/tenant.js';
import './style.css';

/** The page for a path, with its title. */
function route(path: string): { title: string; page: preact.JSX.Element } {
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] === 'console') {
    const [, kind, a, b] = parts;
    if (kind === 'services' && a && b) return { title: `${a}/${b}`, page: <ServicePage team={a} app={b} /> };
    if (kind === 'workflows' && a) return { title: a, page: <WorkflowPage name={a} /> };
    if (kind === 'tenants' && a) return { title: `Tenant ${a}`, page: <TenantPage name={a} /> };
    if (kind === 'approvals') return { title: 'Approvals', page: <ApprovalsPage /> };
    if (kind === 'audit') return { title: 'Audit', page: <AuditPage /> };
  }
  if (parts.length === 0) return { title: 'Overview', page: <Overview /> };
  return {
    title: 'Not found',
    page: (
      <>
        <h1>No such page</h1>
        <p>
          <Link href="/">Back to the overview</Link>
        </p>
      </>
    ),
  };
}

function SignIn({ problem }: { problem?: Error }) {
  const back = location.pathname.startsWith('/console/sign-in') ? '/' : location.pathname;
  return (
    <main id="main" class="sign-in">
      <h1>Sign in to pds</h1>
      <Problem error={problem} />
      <p>Sign in with your organisation's account to see and change what runs.</p>
      <p>
        <a class="button primary" href={`/console/sign-in/oauth?return_to=${encodeURIComponent(back)}`}>
          Sign in
        </a>
      </p>
      <p class="muted small">
        On a sandbox without an identity provider, an operator prints a one-time sign-in link with <code>npx pds console --user &lt;you&gt;</code>.
      </p>
    </main>
  );
}

function App() {
  const path = usePath();
  const [state, setState] = useState<{ session?: Session; problem?: Error; ready: boolean }>({ ready: false });
  useEffect(() => {
    const signedOut = () => setState({ ready: true });
    // A sign-in that failed at the callback comes back here with the reason in the fragment.
    const failed = location.pathname === '/console/sign-in' ? new URLSearchParams(location.hash.slice(1)).get('error') : null;
    if (failed) {
      history.replaceState(null, '', '/console/sign-in');
      setState({ ready: true, problem: new Error(failed) });
      return;
    }
    // A one-time sign-in link (sandbox): the code is in the fragment, which no server ever saw; take it out of the
    // address bar and history first, then exchange it.
    const code = location.pathname === '/console/sign-in' ? new URLSearchParams(location.hash.slice(1)).get('code') : null;
    const start = code
      ? (history.replaceState(null, '', '/console/sign-in'), signInWithCode(code).then((s) => (navigate('/', true), s)))
      : readSession();
    start.then(
      (session) => {
        setSession(session, signedOut);
        setState({ session, ready: true });
      },
      (problem: Error) => setState({ problem: problem instanceof ApiError ? problem : new Error('pds did not answer; try again'), ready: true }),
    );

  }, []);
  const { title, page } = route(path);
  useEffect(() => {
    document.title = `${title} · pds`;
  }, [title]);
  if (!state.ready) return <p class="muted">Loading…</p>;
  if (!state.session) return <SignIn problem={state.problem} />;
  const onSignOut = async () => {
    await signOut().catch(() => undefined);
    setSession(undefined);
    navigate('/', true);
    setState({ ready: true });
  };
  const nav = [
    { href: paths.overview, label: 'Overview' },
    { href: paths.approvals, label: 'Approvals' },
    { href: paths.audit, label: 'Audit' },
  ];
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <Link href="/" class="brand">
          pds
        </Link>
        <nav aria-label="Main">
          <ul>
            {nav.map((n) => (
              <li key={n.href}>
                <Link href={n.href} aria-current={path === n.href ? 'page' : undefined}>
                  {n.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          <span class="user" title="Signed in as">
            {state.session.userId}
          </span>
          <button type="button" onClick={onSignOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {page}
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
