import { type ReactNode, useEffect, useId, useRef, useState } from 'react';
import { ErrorMessage } from './layout.tsx';

// Dialogs on the browser's own <dialog> with showModal(): the rest of the page is inert, focus stays
// inside, Escape closes, focus returns where it was. No library needed for that.

export function Dialog({ title, open, onClose, children, tone }: { title: string; open: boolean; onClose: () => void; children: ReactNode; tone?: 'danger' }) {
  const ref = useRef<HTMLDialogElement>(null);
  const id = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);
  return (
    <dialog
      ref={ref}
      className={`dialog ${tone ?? ''}`}
      aria-labelledby={`${id}-title`}
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
    >
      {open && (
        <>
          <h2 id={`${id}-title`}>{title}</h2>
          {children}
        </>
      )}
    </dialog>
  );
}

/**
 * Asks before a destructive action. With `typeName`, the confirm button works only once that name is
 * typed (projects, environments, flags, forms); without, one more click (submissions, API keys).
 */
export function ConfirmDialog({
  open,
  title,
  children,
  typeName,
  confirmLabel,
  pendingLabel = 'Deleting…',
  onConfirm,
  onCancel,
  pending,
  error,
}: {
  open: boolean;
  title: string;
  children?: ReactNode;
  typeName?: string;
  confirmLabel: string;
  pendingLabel?: string;
  onConfirm: () => void;
  onCancel: () => void;
  pending: boolean;
  error?: unknown;
}) {
  const [typed, setTyped] = useState('');
  const id = useId();
  useEffect(() => {
    if (!open) setTyped('');
  }, [open]);
  const ready = typeName === undefined || typed.trim() === typeName;
  return (
    <Dialog title={title} open={open} onClose={onCancel} tone="danger">
      <form
        method="dialog"
        onSubmit={(e) => {
          e.preventDefault();
          if (ready && !pending) onConfirm();
        }}
      >
        {children ?? <p>This cannot be undone.</p>}
        {typeName !== undefined && (
          <div className="field">
            <label htmlFor={id}>
              Type <strong className="typed-name">{typeName}</strong> to confirm
            </label>
            <input id={id} value={typed} onChange={(e) => setTyped(e.target.value)} autoFocus autoComplete="off" spellCheck={false} />
          </div>
        )}
        <ErrorMessage error={error} />
        <div className="actions">
          <button type="submit" className="danger" disabled={!ready || pending} autoFocus={typeName === undefined}>
            {pending ? pendingLabel : confirmLabel}
          </button>
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** Asks for the name of what is deleted before the delete button works (a ConfirmDialog, shown at once). */
export function ConfirmDelete({
  what,
  name,
  action,
  onConfirm,
  onCancel,
  pending,
  error,
  children,
}: {
  what: string;
  name: string;
  action: string;
  onConfirm: () => void;
  onCancel: () => void;
  pending: boolean;
  error: unknown;
  children?: ReactNode;
}) {
  return (
    <ConfirmDialog
      open
      title={`Delete ${what} ${name}?`}
      typeName={name}
      confirmLabel={action}
      onConfirm={onConfirm}
      onCancel={onCancel}
      pending={pending}
      error={error}
    >
      {children}
    </ConfirmDialog>
  );
}
