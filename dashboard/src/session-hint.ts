// Whether this browser signed in: a hint (no secret) kept so that a signed-out visit goes straight to
// the sign-in page instead of asking the server and logging a 401 in the console. The session cookie
// stays HttpOnly; when it has expired, the first request answers 401 and the hint is dropped.
const HINT = 'flagpost-signed-in';

export function hasSessionHint(): boolean {
  try {
    return localStorage.getItem(HINT) === '1';
  } catch {
    return true;
  }
}

export function setSessionHint(signedIn: boolean): void {
  try {
    if (signedIn) localStorage.setItem(HINT, '1');
    else localStorage.removeItem(HINT);
  } catch {
    // private mode: the server is asked each time
  }
}
