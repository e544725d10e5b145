import { type ButtonHTMLAttributes, type ReactNode, useId, useState } from 'react';
import { FieldProblems, useProblems } from './problems.tsx';

// Buttons, switches and fields. Fields show their problems inline: the API's (through ProblemsProvider,
// by `path`) and the client's own rule (`validate`, shown once the field was left or a submit tried).
// A problem goes away as soon as the value changes from the one it was about.

export type ButtonVariant = 'primary' | 'secondary' | 'danger' | 'ghost' | 'danger-text';

/** A button: `busy` disables it and shows `busyText`. Variants map to the stylesheet's classes. */
export function Button({
  variant = 'secondary',
  size,
  busy,
  busyText,
  children,
  className,
  type = 'button',
  disabled,
  ...rest
}: ButtonHTMLAttributes<HTMLButtonElement> & { variant?: ButtonVariant; size?: 'small'; busy?: boolean; busyText?: string }) {
  const classes = [variant === 'secondary' ? '' : variant, size ?? '', className ?? ''].filter(Boolean).join(' ') || undefined;
  return (
    <button type={type} className={classes} disabled={disabled || busy} aria-busy={busy || undefined} {...rest}>
      {busy && busyText ? busyText : children}
    </button>
  );
}

interface SwitchProps {
  checked: boolean;
  onChange: (checked: boolean) => void;
  label?: ReactNode;
  ariaLabel?: string;
  disabled?: boolean;
  describedBy?: string;
  hint?: string;
}

/**
 * An on/off switch (role="switch"). With `label`, a visible label beside it; with `ariaLabel` only, a
 * compact switch for tables. Changes at once: the caller applies them (optimistically) or holds them.
 * The compact switch uses no hook and renders one element: the flag list has thousands.
 */
export function Switch(props: SwitchProps) {
  return props.label || props.hint ? <LabelledSwitch {...props} /> : switchButton(props, undefined);
}

function LabelledSwitch(props: SwitchProps) {
  const id = useId();
  return (
    <div className="check switch-field">
      {switchButton(props, id)}
      {props.label && <label htmlFor={id}>{props.label}</label>}
      {props.hint && (
        <small id={`${id}-hint`} className="muted">
          {props.hint}
        </small>
      )}
    </div>
  );
}

function switchButton({ checked, onChange, ariaLabel, disabled, describedBy, hint }: SwitchProps, id: string | undefined) {
  return (
    <button
      id={id}
      type="button"
      role="switch"
      aria-checked={checked}
      aria-label={ariaLabel}
      aria-describedby={[describedBy, hint ? `${id}-hint` : ''].filter(Boolean).join(' ') || undefined}
      className="switch"
      disabled={disabled}
      onClick={() => onChange(!checked)}
    >
      {/* The track and thumb are the button's ::before and ::after: one element per switch, for lists of thousands. */}
      {checked ? 'On' : 'Off'}
    </button>
  );
}

/** The API's problems for `path` and the client's rule, each hidden once the value it judged changes. */
function useFieldProblems(
  path: string | undefined,
  value: string,
  validate: ((value: string) => string | undefined) | undefined,
  shown: boolean,
  exact = false,
) {
  const api = useProblems(path ?? '\0', !exact);
  const key = api.join('\n');
  const [at, setAt] = useState<{ key: string; value: string } | undefined>();
  if (key !== '' && at?.key !== key) setAt({ key, value });
  const apiShown = key !== '' && (at?.key !== key || at.value === value) ? api : [];
  const own = shown && validate ? validate(value) : undefined;
  return own ? [own, ...apiShown.filter((r) => r !== own)] : apiShown;
}

interface FieldProps {
  label: string;
  value: string;
  onChange: (value: string) => void;
  /** API path of the field (`slug`, `rules.0.name`): the refusal's reasons for it show under the input. */
  path?: string;
  /** Only the reasons for `path` itself, not for paths below it (a variant's name, whose value is `<path>.value`). */
  exactPath?: boolean;
  /** The client's own rule: a problem in words, or undefined when the value is fine. */
  validate?: (value: string) => string | undefined;
  hint?: ReactNode;
  required?: boolean;
  autoComplete?: string;
  placeholder?: string;
  disabled?: boolean;
  className?: string;
}

/** One field's id, its problems, the aria attributes of its control, and `touch` (left, or a submit tried). */
function useField(path: string | undefined, value: string, validate: ((value: string) => string | undefined) | undefined, hint: ReactNode, exact = false) {
  const id = useId();
  const [touched, setTouched] = useState(false);
  const reasons = useFieldProblems(path, value, validate, touched, exact);
  const aria = {
    id,
    'aria-invalid': reasons.length > 0 || undefined,
    'aria-describedby': [hint ? `${id}-hint` : '', reasons.length ? `${id}-problem` : ''].filter(Boolean).join(' ') || undefined,
  };
  return { id, reasons, aria, touch: () => setTouched(true) };
}

/** The label, the control (children), the hint and the problems of one field. */
function FieldFrame({
  id,
  label,
  hint,
  reasons,
  className,
  children,
}: {
  id: string;
  label: string;
  hint: ReactNode | undefined;
  reasons: string[];
  className: string | undefined;
  children: ReactNode;
}) {
  return (
    <div className={`field ${className ?? ''}`}>
      <label htmlFor={id}>{label}</label>
      {children}
      {hint && (
        <small id={`${id}-hint`} className="muted">
          {hint}
        </small>
      )}
      <FieldProblems id={`${id}-problem`} reasons={reasons} />
    </div>
  );
}

/** A labelled text input with its hint and inline problems. */
export function Field({
  label,
  value,
  onChange,
  type = 'text',
  path,
  validate,
  hint,
  required,
  autoComplete,
  placeholder,
  disabled,
  className,
  inputMode,
  step,
  exactPath,
}: FieldProps & { type?: string; inputMode?: 'numeric' | 'decimal' | 'email' | 'url' | 'search'; step?: string }) {
  const { id, reasons, aria, touch } = useField(path, value, validate, hint, exactPath);
  return (
    <FieldFrame id={id} label={label} hint={hint} reasons={reasons} className={className}>
      <input
        {...aria}
        type={type}
        value={value}
        required={required}
        autoComplete={autoComplete}
        placeholder={placeholder}
        disabled={disabled}
        inputMode={inputMode}
        step={step}
        onBlur={() => value !== '' && touch()}
        onInvalid={touch}
        onChange={(e) => onChange(e.target.value)}
      />
    </FieldFrame>
  );
}

/** A labelled textarea; `spellCheck={false}` for JSON and code, `readOnly` to show without editing. */
export function TextArea({
  label,
  value,
  onChange,
  rows = 3,
  hint,
  path,
  validate,
  disabled,
  className,
  readOnly,
  spellCheck,
}: FieldProps & { rows?: number; readOnly?: boolean; spellCheck?: boolean }) {
  const { id, reasons, aria, touch } = useField(path, value, validate, hint);
  return (
    <FieldFrame id={id} label={label} hint={hint} reasons={reasons} className={className}>
      <textarea
        {...aria}
        value={value}
        rows={rows}
        disabled={disabled}
        readOnly={readOnly}
        spellCheck={spellCheck}
        onBlur={() => value !== '' && touch()}
        onChange={(e) => onChange(e.target.value)}
      />
    </FieldFrame>
  );
}

/** A labelled select; options are its children. */
export function Select({ label, value, onChange, hint, path, children, disabled, className }: Omit<FieldProps, 'validate'> & { children: ReactNode }) {
  const { id, reasons, aria } = useField(path, value, undefined, hint);
  return (
    <FieldFrame id={id} label={label} hint={hint} reasons={reasons} className={className}>
      <select {...aria} value={value} disabled={disabled} onChange={(e) => onChange(e.target.value)}>
        {children}
      </select>
    </FieldFrame>
  );
}

/** A setting that is on or off, shown as a switch with its label (the dashboard has no bare checkbox). */
export function Checkbox({
  label,
  checked,
  onChange,
  hint,
  disabled,
}: {
  label: string;
  checked: boolean;
  onChange: (checked: boolean) => void;
  hint?: string;
  disabled?: boolean;
}) {
  return <Switch label={label} checked={checked} onChange={onChange} hint={hint} disabled={disabled} />;
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

// Client-side rules, the same as the server's schemas (docs/api.md), in words.
export const rules = {
  required: (v: string) => (v.trim() === '' ? 'Required' : undefined),
  slug: (v: string) =>
    v.trim() === ''
      ? 'Required'
      : !/^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/.test(v.trim())
        ? 'Use letters, digits, dots, dashes and underscores, starting and ending with a letter or a digit'
        : v.trim().length > 150
          ? 'Use at most 150 characters'
          : undefined,
  url: (v: string) => {
    if (v.trim() === '') return undefined;
    try {
      const url = new URL(v.trim());
      return url.protocol === 'http:' || url.protocol === 'https:' ? undefined : 'Use an http:// or https:// address';
    } catch {
      return 'Enter a full address such as https://example.com/path';
    }
  },
  email: (v: string) => (v.trim() === '' || /^[^\s@]+@[^\s@]+$/.test(v.trim()) ? undefined : 'Enter an e-mail address such as ada@example.com'),
  minLength: (n: number) => (v: string) => (v.length > 0 && v.length < n ? `Use at least ${n} characters (${v.length} so far)` : undefined),
};
