import { type KeyboardEvent, type ReactNode, useId } from 'react';
import { Link } from 'wouter';
import { ApiError } from '../api.ts';
import { fieldLabel, humanProblems } from './errors.ts';

// Page furniture: sections (cards), tables that scroll in their own box, tabs, breadcrumbs, badges,
// empty states, the loading line and the error box.

export function Section({ title, children, actions, id }: { title: string; children: ReactNode; actions?: ReactNode; id?: string }) {
  const own = useId();
  const headingId = id ?? own;
  return (
    <section className="card" aria-labelledby={headingId}>
      <div className="card-head">
        <h2 id={headingId}>{title}</h2>
        {actions}
      </div>
      {children}
    </section>
  );
}

/** A table in a box of its own that scrolls sideways on a narrow screen (the page never does). */
export function Table({ label, className, children }: { label?: string; className?: string; children: ReactNode }) {
  return (
    <div className="table-wrap" tabIndex={0} role={label ? 'region' : undefined} aria-label={label ? `${label} (scrolls sideways)` : undefined}>
      <table className={className} aria-label={label}>
        {children}
      </table>
    </div>
  );
}

export function Badge({ tone, children }: { tone?: 'warn' | 'ok' | 'danger' | 'muted'; children: ReactNode }) {
  return <span className={`badge ${tone ?? ''}`}>{children}</span>;
}

/** What a screen shows when there is nothing yet: what it is for and the first step. */
export function EmptyState({ title, children, action }: { title: string; children?: ReactNode; action?: ReactNode }) {
  return (
    <div className="empty">
      <p className="empty-title">{title}</p>
      {children && <div className="muted">{children}</div>}
      {action && <div className="empty-action">{action}</div>}
    </div>
  );
}

export interface Crumb {
  label: string;
  href?: string;
}

/** Where the page is: links up to it, the page itself last (aria-current). */
export function Breadcrumbs({ items }: { items: Crumb[] }) {
  return (
    <nav aria-label="Breadcrumb" className="crumbs">
      <ol>
        {items.map((item, i) => (
          <li key={`${i}:${item.label}`}>
            {item.href && i < items.length - 1 ? (
              <Link href={item.href}>{item.label}</Link>
            ) : (
              <span aria-current={i === items.length - 1 ? 'page' : undefined}>{item.label}</span>
            )}
          </li>
        ))}
      </ol>
    </nav>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p className="muted loading" role="status">
      Loading {what}…
    </p>
  );
}

/**
 * The API's message, with the field details of a 400 in words, where the failed action is. `inline`: the
 * API paths whose problems the form's fields show themselves (through ProblemsProvider); those are not
 * listed again here, the others are.
 */
export function ErrorMessage({ error, inline = [] }: { error: unknown; inline?: string[] }) {
  if (!error) return null;
  const message = error instanceof Error ? error.message : String(error);
  const shownByField = (field: string) => inline.some((path) => field === path || field.startsWith(`${path}.`));
  const details = error instanceof ApiError ? humanProblems(error).filter((d) => !shownByField(d.field)) : [];
  return (
    <div role="alert" className="error">
      <p>{message}</p>
      {details.length > 0 && (
        <ul>
          {details.map((d) => (
            <li key={`${d.field}:${d.reason}`}>
              <strong>{fieldLabel(d.field)}</strong>: {d.reason}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

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

/** Links that look like tabs, for sub-pages (a project's flags, environments, history…). */
export function NavTabs({ label, items, current }: { label: string; items: Array<{ key: string; href: string; title: string }>; current: string }) {
  return (
    <nav aria-label={label} className="tabs nav-tabs">
      {items.map((item) => (
        <Link key={item.key} href={item.href} aria-current={item.key === current ? 'page' : undefined}>
          {item.title}
        </Link>
      ))}
    </nav>
  );
}

/** A keyboard shortcut's hint (" · press / to search"): hidden on touch screens, which have no such key (issue 31 item 14). */
export function KeyHint({ children }: { children: ReactNode }) {
  return <span className="key-hint">{children}</span>;
}
