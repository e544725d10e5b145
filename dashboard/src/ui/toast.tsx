import { useSyncExternalStore } from 'react';
import { errorText } from './errors.ts';

// Toasts: short news of what just happened ("Saved production", "Not deleted: …"), in a live region at
// the bottom of the screen. A module-level store, so that the query client's mutation cache can raise
// them as well as components. Successes go after 4 s, errors after 10 s; each has a close button.

export interface ToastItem {
  id: number;
  tone: 'success' | 'error' | 'info';
  text: string;
}

let items: ToastItem[] = [];
let next = 1;
const listeners = new Set<() => void>();
const emit = () => listeners.forEach((l) => l());

function push(tone: ToastItem['tone'], text: string): number {
  const id = next++;
  items = [...items.slice(-3), { id, tone, text }];
  emit();
  setTimeout(() => dismiss(id), tone === 'error' ? 10_000 : 4_000);
  return id;
}

export function dismiss(id: number): void {
  items = items.filter((t) => t.id !== id);
  emit();
}

export const toast = {
  success: (text: string) => push('success', text),
  info: (text: string) => push('info', text),
  /** An error toast: `prefix` says what failed ("Not saved"), then the API's reason in words. */
  error: (error: unknown, prefix?: string) => push('error', prefix ? `${prefix}: ${errorText(error)}` : errorText(error)),
};

const subscribe = (l: () => void) => {
  listeners.add(l);
  return () => listeners.delete(l);
};

/** Where toasts show; rendered once by the app. */
export function Toaster() {
  const list = useSyncExternalStore(
    subscribe,
    () => items,
    () => items,
  );
  return (
    <div className="toasts" role="status" aria-live="polite" aria-label="Notifications">
      {list.map((t) => (
        <div key={t.id} className={`toast ${t.tone}`}>
          <span className="toast-icon" aria-hidden="true">
            {t.tone === 'success' ? '✓' : t.tone === 'error' ? '!' : 'i'}
          </span>
          <span className="toast-text">{t.text}</span>
          <button type="button" className="ghost small" onClick={() => dismiss(t.id)} aria-label="Dismiss notification">
            ×
          </button>
        </div>
      ))}
    </div>
  );
}
