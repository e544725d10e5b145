import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type ComponentType, type FormEvent, lazy, type ReactNode, Suspense, useEffect, useState } from 'react';
import { Link, Redirect, Route, Switch, useLocation, useSearch } from 'wouter';
import { api, ApiError, type CurrentSession, type Project } from './api.ts';
import { hasSessionHint, setSessionHint, useSession } from './session.ts';
import { returnPath } from '../../src/http/return-path.ts';
import { Button, ErrorMessage, Field, Loading, Select, ThemeSwitch, toast, Toaster } from './ui/index.ts';
import { ProjectsScreen } from './screens/Projects.tsx';
import { ProjectFlagsScreen } from './screens/ProjectFlags.tsx';
import { EnvironmentsScreen } from './screens/Environments.tsx';
import { StaleFlagsScreen } from './screens/StaleFlags.tsx';
import { ProjectUsageScreen } from './screens/FlagUsage.tsx';
import { ProjectHistoryScreen } from './screens/ProjectHistory.tsx';
import { MembersScreen } from './screens/Members.tsx';
import { AccountScreen } from './screens/Account.tsx';
import { FormsScreen } from './screens/Forms.tsx';
import { SubmissionsScreen } from './screens/Submissions.tsx';
import { ChangeRequestsScreen } from './screens/ChangeRequests.tsx';
import { ChangeRequestScreen } from './screens/ChangeRequest.tsx';
import { CompareScreen } from './screens/Compare.tsx';
import { WebhooksScreen } from './screens/Webhooks.tsx';
import { ExperimentsScreen } from './screens/Experiments.tsx';
import { continueSignOut, SingleSignOnButton, useSsoInfo } from './screens/SingleSignOn.tsx';

// The flag screen holds the rich-text editor: it loads with its own chunk, when first opened.
const FlagScreen = lazy(() => import('./screens/Flag.tsx'));
// One submission's screen loads when opened, which keeps the first load within its budget (test/dashboard-e2e.test.ts).
const SubmissionScreen = lazy(() => import('./screens/Submission.tsx').then((m) => ({ default: m.SubmissionScreen })));
// Targeting screens share the condition editor; they load with their own chunks too.
const SegmentsScreen = lazy(() => import('./screens/Segments.tsx'));
const PlaygroundScreen = lazy(() => import('./screens/Playground.tsx'));
// Owners' and designers' pages: rarely opened, so not in the first load.
const AuditScreen = lazy(() => import('./screens/Audit.tsx'));
const DesignScreen = lazy(() => import('./screens/Design.tsx'));
// A form's settings (templates, rules, previews, the chart) and an experiment's results: their own chunks.
const FormScreen = suspended(
  lazy(() => import('./screens/Form.tsx').then((m) => ({ default: m.FormScreen }))),
  'the form',
);
const ExperimentResultsScreen = suspended(
  lazy(() => import('./screens/ExperimentResults.tsx').then((m) => ({ default: m.ExperimentResultsScreen }))),
  'the results',
);

/** A lazily loaded screen as a route's component: it shows "Loading" until its chunk is there. */
function suspended<P extends object>(Screen: ComponentType<P>, what: string) {
  return function SuspendedScreen(props: P) {
    return (
      <Suspense fallback={<Loading what={what} />}>
        <Screen {...props} />
      </Suspense>
    );
  };
}

export function App() {
  return (
    <>
      <Routes />
      <Toaster />
    </>
  );
}

function Routes() {
  return (
    <Switch>
      <Route path="/sign-in">
        <SignIn />
      </Route>
      <Route path="/accept-invitation">
        <AcceptInvitation />
      </Route>
      <Route>
        <SignedIn>
          <Layout>
            <Switch>
              <Route path="/">
                <Redirect to="/projects" replace />
              </Route>
              <Route path="/projects" component={ProjectsScreen} />
              <Route path="/projects/:key" component={ProjectFlagsScreen} />
              <Route path="/projects/:key/environments" component={EnvironmentsScreen} />
              <Route path="/projects/:key/stale-flags" component={StaleFlagsScreen} />
              <Route path="/projects/:key/usage" component={ProjectUsageScreen} />
              <Route path="/projects/:key/history" component={ProjectHistoryScreen} />
              <Route path="/projects/:key/changes" component={ChangeRequestsScreen} />
              <Route path="/projects/:key/changes/:id" component={ChangeRequestScreen} />
              <Route path="/projects/:key/compare" component={CompareScreen} />
              <Route path="/projects/:key/webhooks" component={WebhooksScreen} />
              <Route path="/projects/:key/experiments" component={ExperimentsScreen} />
              <Route path="/projects/:key/experiments/:env/:experiment" component={ExperimentResultsScreen} />
              <Route path="/projects/:key/segments">
                {(params) => (
                  <Suspense fallback={<Loading what="the segments" />}>
                    <SegmentsScreen projectKey={params.key} />
                  </Suspense>
                )}
              </Route>
              <Route path="/projects/:key/playground">
                {(params) => (
                  <Suspense fallback={<Loading what="the playground" />}>
                    <PlaygroundScreen projectKey={params.key} />
                  </Suspense>
                )}
              </Route>
              <Route path="/members" component={MembersScreen} />
              <Route path="/audit">
                <Suspense fallback={<Loading what="the audit log" />}>
                  <AuditScreen />
                </Suspense>
              </Route>
              <Route path="/design">
                <Suspense fallback={<Loading what="the design system" />}>
                  <DesignScreen />
                </Suspense>
              </Route>
              <Route path="/account" component={AccountScreen} />
              <Route path="/projects/:key/flags/:slug">
                {(params) => (
                  <Suspense fallback={<Loading what="the flag" />}>
                    <FlagScreen projectKey={params.key} slug={params.slug} />
                  </Suspense>
                )}
              </Route>
              <Route path="/forms" component={FormsScreen} />
              <Route path="/forms/:key" component={FormScreen} />
              <Route path="/forms/:key/submissions" component={SubmissionsScreen} />
              <Route path="/forms/:key/submissions/:id">
                {(params) => (
                  <Suspense fallback={<Loading what="the submission" />}>
                    <SubmissionScreen params={params} />
                  </Suspense>
                )}
              </Route>
              <Route>
                <NotFound />
              </Route>
            </Switch>
          </Layout>
        </SignedIn>
      </Route>
    </Switch>
  );
}

/** Shows its children once the session is known to be live; else sends the visitor to sign in. */
function SignedIn({ children }: { children: ReactNode }) {
  const [location] = useLocation();
  const session = useSession();
  const toSignIn = <Redirect to={`/sign-in?next=${encodeURIComponent(location)}`} replace />;
  if (!hasSessionHint()) return toSignIn;
  if (session.isPending) return <Loading what="your session" />;
  if (session.error instanceof ApiError && session.error.status === 401) return toSignIn;
  if (session.error) return <Unreachable error={session.error} retry={() => session.refetch()} busy={session.isFetching} />;
  return <>{children}</>;
}

/** The server did not answer (or failed): say so, and offer to try again. */
function Unreachable({ error, retry, busy }: { error: unknown; retry: () => void; busy: boolean }) {
  return (
    <main className="retry">
      <h1>Flagpost is not answering</h1>
      <p>
        {error instanceof ApiError && error.status >= 500
          ? `The server answered with an error (${error.status}). It may be starting or restarting.`
          : 'The server cannot be reached. It may be stopped or restarting, or the network is down.'}
      </p>
      <p className="muted">Your work is safe on the server; nothing was lost here.</p>
      <Button variant="primary" onClick={retry} busy={busy} busyText="Trying again…">
        Try again
      </Button>
    </main>
  );
}

const NAV = [
  { href: '/projects', title: 'Projects', owner: false },
  { href: '/forms', title: 'Forms', owner: false },
  { href: '/members', title: 'Members', owner: true },
  { href: '/audit', title: 'Audit log', owner: true },
  { href: '/account', title: 'Account', owner: false },
];

function Layout({ children }: { children: ReactNode }) {
  const session = useSession();
  const queryClient = useQueryClient();
  const [location, navigate] = useLocation();
  const [menuOpen, setMenuOpen] = useState(false);
  const projects = useQuery({ queryKey: ['projects'], queryFn: () => api<{ projects: Project[] }>('GET', '/projects') });
  const currentProject = /^\/projects\/([^/]+)/.exec(location)?.[1];
  const signOut = useMutation({
    mutationFn: () => api<{ endSessionUrl?: string } | undefined>('DELETE', '/sessions/current'),
    meta: { invalidates: [], error: 'Not signed out' },
    onSuccess: (answer) => {
      setSessionHint(false);
      queryClient.clear();
      if (!continueSignOut(answer)) navigate('/sign-in', { replace: true });
    },
  });
  useEffect(() => setMenuOpen(false), [location]);
  useSearchShortcut();
  const owner = session.data?.role === 'owner';
  return (
    <div className="shell">
      <a href="#content" className="skip-link">
        Skip to content
      </a>
      <header className="topbar">
        <Link href="/projects" className="brand">
          <span className="brand-mark" aria-hidden="true" />
          Flagpost
        </Link>
        <button type="button" aria-expanded={menuOpen} aria-controls="sidebar" onClick={() => setMenuOpen(!menuOpen)}>
          {menuOpen ? 'Close menu' : 'Menu'}
        </button>
      </header>
      <aside id="sidebar" className={`sidebar ${menuOpen ? 'open' : ''}`} aria-label="Sidebar">
        <Link href="/projects" className="brand sidebar-brand">
          <span className="brand-mark" aria-hidden="true" />
          Flagpost
        </Link>
        {projects.data && projects.data.projects.length > 0 && (
          <Select label="Project" value={currentProject ?? ''} onChange={(key) => key && navigate(`/projects/${encodeURIComponent(key)}`)}>
            {!currentProject && <option value="">Choose a project</option>}
            {projects.data.projects.map((p) => (
              <option key={p.key} value={p.key}>
                {p.name}
              </option>
            ))}
          </Select>
        )}
        <nav aria-label="Main">
          <ul>
            {NAV.filter((item) => !item.owner || owner).map((item) => (
              <li key={item.href}>
                <Link href={item.href} aria-current={location === item.href || location.startsWith(`${item.href}/`) ? 'page' : undefined}>
                  {item.title}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div className="sidebar-foot">
          <p className="muted small-text">
            <kbd>/</kbd> search
          </p>
          <ThemeSwitch />
          <span className="who">{whoText(session.data)}</span>
          <Button onClick={() => signOut.mutate()} busy={signOut.isPending} busyText="Signing out…">
            Sign out
          </Button>
        </div>
      </aside>
      <main id="content" className="content" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}

/** `/` (or Ctrl/⌘+K) puts the cursor in the screen's search field, wherever focus is not typing. */
function useSearchShortcut() {
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      const target = event.target as HTMLElement | null;
      const typing = target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
      const slash = event.key === '/' && !typing && !event.ctrlKey && !event.metaKey && !event.altKey;
      const k = event.key.toLowerCase() === 'k' && (event.ctrlKey || event.metaKey);
      if (!slash && !k) return;
      const search = document.querySelector<HTMLInputElement>('main input[type="search"]');
      if (!search) return;
      event.preventDefault();
      search.focus();
      search.select();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
}

const whoText = (session: CurrentSession | undefined) => (!session ? '' : session.user ? `${session.user.email} (${session.role})` : 'Admin token');

/** After signing in: back to the page the visitor came from, if it is one of the dashboard's own. */
function useAfterSignIn() {
  const [, navigate] = useLocation();
  const search = new URLSearchParams(useSearch());
  const queryClient = useQueryClient();
  return async (viaToken = false) => {
    setSessionHint(true);
    queryClient.clear();
    await queryClient.invalidateQueries({ queryKey: ['session'] });
    const next = search.get('next');
    // The admin token is for setting up: with no member yet, the next step is the first owner account.
    if (viaToken) {
      const users = await api<{ users: unknown[] }>('GET', '/users').catch(() => undefined);
      if (users && users.users.length === 0) toast.info('Signed in with the admin token. Next step: create the first owner account (Members).');
    }
    // The server's own check (src/http/return-path.ts): same origin only, no whitespace or control characters.
    navigate(returnPath(next, window.location.origin), { replace: true });
  };
}

function SignIn() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [token, setToken] = useState('');
  const done = useAfterSignIn();
  const withPassword = useMutation({
    mutationFn: () => api('POST', '/sessions', { email: email.trim(), password }),
    meta: { error: false, invalidates: [] },
    onSuccess: async () => {
      setPassword('');
      await done();
    },
  });
  const withToken = useMutation({
    mutationFn: (value: string) => api('POST', '/sessions', { token: value }),
    meta: { error: false, invalidates: [] },
    onSuccess: async () => {
      setToken('');
      await done(true);
    },
  });
  // With no owner account yet only the admin token can sign in: its form comes first until one exists.
  const info = useSsoInfo();
  if (info.isPending) return <Loading what="the sign-in" />;
  const firstRun = info.data?.ownerExists === false;
  const accountForm = (
    <form
      onSubmit={(event: FormEvent) => {
        event.preventDefault();
        withPassword.mutate();
      }}
      className="card"
      aria-label="Account sign-in"
    >
      <Field label="E-mail address" type="email" value={email} onChange={setEmail} required autoComplete="username" />
      <Field label="Password" type="password" value={password} onChange={setPassword} required autoComplete="current-password" />
      <ErrorMessage error={withPassword.error} />
      <button type="submit" className={firstRun ? undefined : 'primary'} disabled={withPassword.isPending || email.trim() === '' || password === ''}>
        {withPassword.isPending ? 'Signing in…' : 'Sign in'}
      </button>
    </form>
  );
  const tokenForm = (
    <form
      onSubmit={(event: FormEvent) => {
        event.preventDefault();
        withToken.mutate(token.trim());
      }}
      className="card"
      aria-label="Token sign-in"
    >
      <p className="muted">
        {firstRun ? 'No account exists yet. Sign in' : 'First time here? Sign in'} with the admin token printed on the first start (or FLAGPOST_ADMIN_TOKEN);
        the next step is then your own owner account.
      </p>
      <Field label="Admin token" type="password" value={token} onChange={setToken} required autoComplete="off" />
      <ErrorMessage error={withToken.error} />
      <button type="submit" className={firstRun ? 'primary' : undefined} disabled={withToken.isPending || token.trim() === ''}>
        {withToken.isPending ? 'Signing in…' : 'Sign in with the admin token'}
      </button>
    </form>
  );
  return (
    <main className="narrow">
      <h1>Sign in</h1>
      <p className="muted">Flagpost: feature flags and forms.</p>
      <SingleSignOnButton />
      {firstRun ? tokenForm : accountForm}
      {firstRun ? accountForm : tokenForm}
    </main>
  );
}

/** The page of an invitation link: the token travels after `#`, so no server log ever sees it. */
function AcceptInvitation() {
  const token = new URLSearchParams(window.location.hash.slice(1)).get('token') ?? '';
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [problem, setProblem] = useState<string | undefined>();
  const done = useAfterSignIn();
  const accept = useMutation({
    mutationFn: () => api('POST', '/invitations/accept', { token, password }),
    meta: { error: false, invalidates: [] },
    onSuccess: async () => {
      window.history.replaceState(null, '', window.location.pathname);
      await done();
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (password !== repeat) {
      setProblem('The two passwords differ');
      return;
    }
    setProblem(undefined);
    accept.mutate();
  };
  return (
    <main className="narrow">
      <h1>Join Flagpost</h1>
      {token === '' ? (
        <div role="alert" className="error">
          <p>This page needs the link of an invitation. Ask an owner for a new one.</p>
        </div>
      ) : (
        <form onSubmit={submit} className="card">
          <p>Choose your password to accept the invitation.</p>
          <Field
            label="New password"
            type="password"
            value={password}
            onChange={setPassword}
            required
            autoComplete="new-password"
            hint="10 to 200 characters"
          />
          <Field label="Repeat the password" type="password" value={repeat} onChange={setRepeat} required autoComplete="new-password" />
          {problem && (
            <div role="alert" className="error">
              <p>{problem}</p>
            </div>
          )}
          <ErrorMessage error={accept.error} />
          <button type="submit" className="primary" disabled={accept.isPending}>
            {accept.isPending ? 'Joining…' : 'Accept the invitation'}
          </button>
        </form>
      )}
    </main>
  );
}

function NotFound() {
  return (
    <>
      <h1>Page not found</h1>
      <p>
        Nothing lives at this address. <Link href="/projects">Go to the projects</Link>.
      </p>
    </>
  );
}
