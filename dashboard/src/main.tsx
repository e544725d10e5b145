import { MutationCache, type QueryKey, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { ApiError } from './api.ts';
import { App } from './App.tsx';
import { applyTheme, storedTheme, toast } from './ui/index.ts';
import './styles.css';

declare module '@tanstack/react-query' {
  interface Register {
    mutationMeta: {
      /** A toast once the write succeeded ("Saved production"). */
      success?: string;
      /** What failed, before the reason, in the error toast ("Not saved"); false: the screen shows it inline. */
      error?: string | false;
      /** The queries this write changed, invalidated once it settles ([]: none). Every write says. */
      invalidates: QueryKey[];
    };
  }
}

applyTheme(storedTheme());

const queryClient: QueryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // A refused request (4xx) is not retried: the answer will not change by asking again.
      retry: (failures, error) => !(error instanceof ApiError && error.status >= 400 && error.status < 500) && failures < 2,
      refetchOnWindowFocus: false,
      staleTime: 5_000,
    },
  },
  mutationCache: new MutationCache({
    onSuccess: (_data, _variables, _context, mutation) => {
      if (mutation.meta?.success) toast.success(mutation.meta.success);
    },
    onError: (error, _variables, _context, mutation) => {
      if (error instanceof ApiError && error.status === 401) return; // on the way to the sign-in page
      if (mutation.meta?.error !== false) toast.error(error, mutation.meta?.error ?? 'That did not work');
    },
    // After a write, what it changed is fetched again, so that the screen agrees with the server.
    onSettled: async (_data, _error, _variables, _context, mutation): Promise<void> => {
      const keys = mutation.meta?.invalidates ?? [];
      await Promise.all(keys.map((queryKey) => queryClient.invalidateQueries({ queryKey })));
    },
  }),
});

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <App />
    </QueryClientProvider>
  </StrictMode>,
);
