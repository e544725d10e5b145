import { type KeyboardEvent, useId, useState, type ReactNode } from 'react';
import { ApiError } from './api.ts';

/** The API's message, with the field details of a 400, where the failed action is. */
export function ErrorMessage({ error }: { error: unknown }) {
  if (!error) return null;
  const message = error instanceof Error ? error.message : String(error);
  const details = error instanceof ApiError ? error.details : [];
  return (
    <div role="alert" className="error">
      <p>{message}</p>
      {details.length > 0 && (
        <ul>
          {details.map((d) => (
            <li key={`${d.field}:${d.reason}`}>
              <code>{d.field}</code>: {d.reason}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p className="muted" role="status">
      Loading {what}…
    </p>
  );
}

/** A labelled text input; extra props go to the input. */
export function Field({
  label,
  value,
  onChange,
  type = 'text',
  required,
  hint,
  autoComplete,
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  type?: string;
  required?: boolean;
  hint?: string;
  autoComplete?: string;
}) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input id={id} type={type} value={value} required={required} autoComplete={autoComplete} onChange={(e) => onChange(e.target.value)} />
      {hint && <small className="muted">{hint}</small>}
    </div>
  );
}

export function TextArea({
  label,
  value,
  onChange,
  rows = 3,
  hint,
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  rows?: number;
  hint?: string;
}) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <textarea id={id} value={value} rows={rows} onChange={(e) => onChange(e.target.value)} />
      {hint && <small className="muted">{hint}</small>}
    </div>
  );
}

export function Checkbox({ label, checked, onChange }: { label: string; checked: boolean; onChange: (checked: boolean) => void }) {
  const id = useId();
  return (
    <div className="check">
      <input id={id} type="checkbox" checked={checked} onChange={(e) => onChange(e.target.checked)} />
      <label htmlFor={id}>{label}</label>
    </div>
  );
}

/** Copies `text`; says so for a moment. */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      className="small"
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text);
          setCopied(true);
          setTimeout(() => setCopied(false), 1500);
        } catch {
          setCopied(false);
        }
      }}
    >
      {label}
      <span className="sr-status" aria-live="polite">
        {copied ? ' (copied)' : ''}
      </span>
    </button>
  );
}

/** Asks for the name of what is deleted before the delete button works. */
export function ConfirmDelete({
  what,
  name,
  action,
  onConfirm,
  onCancel,
  pending,
  error,
}: {
  what: string;
  name: string;
  action: string;
  onConfirm: () => void;
  onCancel: () => void;
  pending: boolean;
  error: unknown;
}) {
  const [typed, setTyped] = useState('');
  const id = useId();
  return (
    <div role="dialog" aria-modal="true" aria-labelledby={`${id}-title`} className="dialog">
      <h3 id={`${id}-title`}>
        Delete {what} {name}?
      </h3>
      <p>This cannot be undone.</p>
      <div className="field">
        <label htmlFor={id}>Type {name} to confirm</label>
        <input id={id} value={typed} onChange={(e) => setTyped(e.target.value)} autoFocus autoComplete="off" />
      </div>
      <ErrorMessage error={error} />
      <div className="actions">
        <button type="button" className="danger" disabled={typed !== name || pending} onClick={onConfirm}>
          {pending ? 'Deleting…' : action}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </div>
  );
}

export function Section({ title, children }: { title: string; children: ReactNode }) {
  return (
    <section className="card">
      <h2>{title}</h2>
      {children}
    </section>
  );
}

export const formatDate = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : '');

/** Tabs (WAI-ARIA pattern): arrow keys, Home and End move between them; only the chosen panel is shown. */
export function Tabs({
  label,
  tabs,
  selected,
  onSelect,
  children,
}: {
  label: string;
  tabs: Array<{ key: string; title: string }>;
  selected: string;
  onSelect: (key: string) => void;
  children: ReactNode;
}) {
  const id = useId();
  const index = Math.max(
    0,
    tabs.findIndex((t) => t.key === selected),
  );
  const go = (i: number) => {
    const tab = tabs[(i + tabs.length) % tabs.length]!;
    onSelect(tab.key);
    document.getElementById(`${id}-tab-${tab.key}`)?.focus();
  };
  const onKeyDown = (event: KeyboardEvent) => {
    const moves: Record<string, number> = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: tabs.length - 1 };
    const to = moves[event.key];
    if (to === undefined) return;
    event.preventDefault();
    go(to);
  };
  const current = tabs[index];
  return (
    <>
      <div role="tablist" aria-label={label} className="tabs" onKeyDown={onKeyDown}>
        {tabs.map((t) => (
          <button
            key={t.key}
            id={`${id}-tab-${t.key}`}
            type="button"
            role="tab"
            aria-selected={t.key === current?.key}
            aria-controls={`${id}-panel`}
            tabIndex={t.key === current?.key ? 0 : -1}
            onClick={() => onSelect(t.key)}
          >
            {t.title}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`${id}-panel`} aria-labelledby={current ? `${id}-tab-${current.key}` : undefined}>
        {children}
      </div>
    </>
  );
}
