import { useQuery } from '@tanstack/react-query';
import { useSearch } from 'wouter';
import { type Answer, api } from '../api.ts';
import { setSessionHint } from '../session.ts';
import { Button } from '../ui/index.ts';

// Single sign-on on the sign-in page (docs/adr/0032-identity-and-sso.md): a button to the identity
// provider when FLAGPOST_OIDC_ISSUER is set, and a note when passwords are off. The same answer says
// whether an owner exists yet (issue 31 item 17): until one does, the page leads with the admin token.

export type SsoInfo = Answer<'/admin/v1/sso', 'get'>;

export function useSsoInfo() {
  return useQuery({ queryKey: ['sso'], queryFn: () => api<SsoInfo>('GET', '/sso'), staleTime: Infinity });
}

/** "Sign in with <provider>": a full-page navigation, since the provider's page takes over. */
export function SingleSignOnButton() {
  const info = useSsoInfo();
  const next = new URLSearchParams(useSearch()).get('next') ?? '/projects';
  if (!info.data?.enabled) return null;
  return (
    <div className="card">
      <Button
        variant="primary"
        onClick={() => {
          // The provider sends the browser back with a session cookie the page cannot see: the hint makes the
          // dashboard ask for the session on return (a refused sign-in answers 401 there, which drops it).
          setSessionHint(true);
          window.location.assign(`/admin/v1/sso/start?next=${encodeURIComponent(next)}`);
        }}
      >
        Sign in with {info.data.name ?? 'SSO'}
      </Button>
      {info.data.passwordsOff && <p className="muted">Passwords are off on this Flagpost, except for the break-glass owner.</p>}
    </div>
  );
}

/** After signing out of a single sign-on session: on to the provider's logout. */
export function continueSignOut(answer: { endSessionUrl?: string } | undefined): boolean {
  if (!answer?.endSessionUrl) return false;
  window.location.assign(answer.endSessionUrl);
  return true;
}
