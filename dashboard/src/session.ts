import { useQuery } from '@tanstack/react-query';
import { api, type CurrentSession } from './api.ts';

import { hasSessionHint } from './session-hint.ts';

export { hasSessionHint, setSessionHint } from './session-hint.ts';

/** The signed-in session: who, with which role. Shared by every screen (one request). */
export function useSession() {
  return useQuery({
    queryKey: ['session'],
    queryFn: () => api<CurrentSession>('GET', '/sessions/current'),
    enabled: hasSessionHint(),
  });
}

/** Whether the signed-in role may write flags, forms and the rest (viewers may not). */
export function useCanWrite(): boolean {
  const session = useSession();
  return session.data !== undefined && session.data.role !== 'viewer';
}
