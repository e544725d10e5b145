import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, lazy, type ReactNode, Suspense, useState } from 'react';
import { Link, Redirect, Route, Switch, useLocation, useSearch } from 'wouter';
import { api, ApiError, type CurrentSession } from './api.ts';
import { useSession } from './session.ts';
import { ErrorMessage, Field, Loading } from './ui.tsx';
import { ProjectsScreen } from './screens/Projects.tsx';
import { ProjectFlagsScreen } from './screens/ProjectFlags.tsx';
import { EnvironmentsScreen } from './screens/Environments.tsx';
import { StaleFlagsScreen } from './screens/StaleFlags.tsx';
import { ProjectUsageScreen } from './screens/FlagUsage.tsx';
import { ProjectHistoryScreen } from './screens/ProjectHistory.tsx';
import { MembersScreen } from './screens/Members.tsx';
import { AccountScreen } from './screens/Account.tsx';
import { FormsScreen } from './screens/Forms.tsx';
import { FormScreen } from './screens/Form.tsx';
import { SubmissionsScreen } from './screens/Submissions.tsx';
import { SubmissionScreen } from './screens/Submission.tsx';
import { ChangeRequestsScreen } from './screens/ChangeRequests.tsx';
import { ChangeRequestScreen } from './screens/ChangeRequest.tsx';
import { CompareScreen } from './screens/Compare.tsx';
import { WebhooksScreen } from './screens/Webhooks.tsx';
import { continueSignOut, SingleSignOnButton } from './screens/SingleSignOn.tsx';

// The flag screen holds the rich-text editor: it loads with its own chunk, when first opened.
const FlagScreen = lazy(() => import('./screens/Flag.tsx'));
// Targeting screens share the condition editor; they load with their own chunks too.
const SegmentsScreen = lazy(() => import('./screens/Segments.tsx'));
const PlaygroundScreen = lazy(() => import('./screens/Playground.tsx'));

export function App() {
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
              <Route path="/forms/:key/submissions/:id" component={SubmissionScreen} />
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
  if (session.isPending) return <Loading what="your session" />;
  if (session.error instanceof ApiError && session.error.status === 401) {
    return <Redirect to={`/sign-in?next=${encodeURIComponent(location)}`} replace />;
  }
  if (session.error)
    return (
      <main>
        <ErrorMessage error={session.error} />
      </main>
    );
  return <>{children}</>;
}

function Layout({ children }: { children: ReactNode }) {
  const session = useSession();
  const queryClient = useQueryClient();
  const [, navigate] = useLocation();
  const signOut = useMutation({
    mutationFn: () => api<{ endSessionUrl?: string } | undefined>('DELETE', '/sessions/current'),
    onSuccess: (answer) => {
      queryClient.clear();
      if (!continueSignOut(answer)) navigate('/sign-in', { replace: true });
    },
  });
  return (
    <>
      <header className="top">
        <Link href="/projects" className="brand">
          Flagpost
        </Link>
        <nav aria-label="Main">
          <Link href="/projects">Projects</Link>
          <Link href="/forms">Forms</Link>
          {session.data?.role === 'owner' && <Link href="/members">Members</Link>}
          <Link href="/account">Account</Link>
        </nav>
        <span className="who">{whoText(session.data)}</span>
        <button type="button" onClick={() => signOut.mutate()} disabled={signOut.isPending}>
          {signOut.isPending ? 'Signing out…' : 'Sign out'}
        </button>
      </header>
      <main>
        <ErrorMessage error={signOut.error} />
        {children}
      </main>
    </>
  );
}

const whoText = (session: CurrentSession | undefined) => (!session ? '' : session.user ? `${session.user.email} (${session.role})` : 'Admin token');

/** After signing in: back to the page the visitor came from, if it is one of the dashboard's own. */
function useAfterSignIn() {
  const [, navigate] = useLocation();
  const search = new URLSearchParams(useSearch());
  const queryClient = useQueryClient();
  return async () => {
    queryClient.clear();
    await queryClient.invalidateQueries({ queryKey: ['session'] });
    const next = search.get('next');
    navigate(next && next.startsWith('/') && !next.startsWith('//') ? next : '/projects', { replace: true });
  };
}

function SignIn() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [token, setToken] = useState('');
  const done = useAfterSignIn();
  const withPassword = useMutation({
    mutationFn: () => api('POST', '/sessions', { email: email.trim(), password }),
    onSuccess: async () => {
      setPassword('');
      await done();
    },
  });
  const withToken = useMutation({
    mutationFn: (value: string) => api('POST', '/sessions', { token: value }),
    onSuccess: async () => {
      setToken('');
      await done();
    },
  });
  return (
    <main className="narrow">
      <h1>Sign in</h1>
      <p className="muted">Flagpost: feature flags and forms.</p>
      <SingleSignOnButton />
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
        <button type="submit" className="primary" disabled={withPassword.isPending || email.trim() === '' || password === ''}>
          {withPassword.isPending ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <form
        onSubmit={(event: FormEvent) => {
          event.preventDefault();
          withToken.mutate(token.trim());
        }}
        className="card"
        aria-label="Token sign-in"
      >
        <p className="muted">Or, to set up the first members: the admin token printed on the first start (or FLAGPOST_ADMIN_TOKEN).</p>
        <Field label="Admin token" type="password" value={token} onChange={setToken} required autoComplete="off" />
        <ErrorMessage error={withToken.error} />
        <button type="submit" disabled={withToken.isPending || token.trim() === ''}>
          {withToken.isPending ? 'Signing in…' : 'Sign in with the admin token'}
        </button>
      </form>
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
