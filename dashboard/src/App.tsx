import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, lazy, type ReactNode, Suspense, useState } from 'react';
import { Link, Redirect, Route, Switch, useLocation, useSearch } from 'wouter';
import { api, ApiError } from './api.ts';
import { ErrorMessage, Field, Loading } from './ui.tsx';
import { ProjectsScreen } from './screens/Projects.tsx';
import { ProjectFlagsScreen } from './screens/ProjectFlags.tsx';
import { EnvironmentsScreen } from './screens/Environments.tsx';
import { StaleFlagsScreen } from './screens/StaleFlags.tsx';
import { FormsScreen } from './screens/Forms.tsx';
import { FormScreen } from './screens/Form.tsx';
import { SubmissionsScreen } from './screens/Submissions.tsx';
import { SubmissionScreen } from './screens/Submission.tsx';

// The flag screen holds the rich-text editor: it loads with its own chunk, when first opened.
const FlagScreen = lazy(() => import('./screens/Flag.tsx'));

export function App() {
  return (
    <Switch>
      <Route path="/sign-in">
        <SignIn />
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
  const session = useQuery({ queryKey: ['session'], queryFn: () => api<{ expiresAt: string | null }>('GET', '/sessions/current') });
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
  const queryClient = useQueryClient();
  const [, navigate] = useLocation();
  const signOut = useMutation({
    mutationFn: () => api('DELETE', '/sessions/current'),
    onSuccess: () => {
      queryClient.clear();
      navigate('/sign-in', { replace: true });
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
        </nav>
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

function SignIn() {
  const [token, setToken] = useState('');
  const [, navigate] = useLocation();
  const search = new URLSearchParams(useSearch());
  const queryClient = useQueryClient();
  const signIn = useMutation({
    mutationFn: (value: string) => api('POST', '/sessions', { token: value }),
    onSuccess: async () => {
      setToken('');
      await queryClient.invalidateQueries({ queryKey: ['session'] });
      const next = search.get('next');
      navigate(next && next.startsWith('/') && !next.startsWith('//') ? next : '/projects', { replace: true });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    signIn.mutate(token.trim());
  };
  return (
    <main className="narrow">
      <h1>Sign in</h1>
      <p className="muted">Flagpost: feature flags and forms. Sign in with the admin token printed on the first start (or FLAGPOST_ADMIN_TOKEN).</p>
      <form onSubmit={submit} className="card">
        <Field label="Admin token" type="password" value={token} onChange={setToken} required autoComplete="current-password" />
        <ErrorMessage error={signIn.error} />
        <button type="submit" className="primary" disabled={signIn.isPending || token.trim() === ''}>
          {signIn.isPending ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
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
