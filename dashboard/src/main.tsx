import { MutationCache, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { ApiError } from './api.ts';
import { App } from './App.tsx';
import './styles.css';

const queryClient: QueryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // A refused request (4xx) is not retried: the answer will not change by asking again.
      retry: (failures, error) => !(error instanceof ApiError && error.status >= 400 && error.status < 500) && failures < 2,
      refetchOnWindowFocus: false,
      staleTime: 5_000,
    },
  },
  // After any write, what the screen shows is fetched again, so that it agrees with the server.
  mutationCache: new MutationCache({
    onSettled: async (): Promise<void> => {
      await queryClient.invalidateQueries();
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
