import { type ReactNode, useId } from 'react';
import { FieldProblems, useProblems } from './problems.tsx';

// Inputs of the targeting editors: labelled, with the problems of their field (by API path) under them.

interface Common {
  label: string;
  /** API path of the field (`rules.0.name`): its problems show under the input. */
  path?: string;
  hint?: string;
  className?: string;
}

export function TextInput({
  label,
  path,
  hint,
  value,
  onChange,
  type = 'text',
  className,
  disabled,
  placeholder,
  step,
}: Common & { value: string; onChange: (v: string) => void; type?: string; disabled?: boolean; placeholder?: string; step?: string }) {
  const id = useId();
  const reasons = useProblems(path ?? '\0');
  const describedBy = [hint ? `${id}-hint` : '', reasons.length ? `${id}-problem` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div className={`field ${className ?? ''}`}>
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        type={type}
        value={value}
        step={step}
        placeholder={placeholder}
        disabled={disabled}
        aria-invalid={reasons.length > 0 || undefined}
        aria-describedby={describedBy}
        onChange={(e) => onChange(e.target.value)}
      />
      {hint && (
        <small id={`${id}-hint`} className="muted">
          {hint}
        </small>
      )}
      <FieldProblems id={`${id}-problem`} reasons={reasons} />
    </div>
  );
}

export function SelectInput({
  label,
  path,
  hint,
  value,
  onChange,
  children,
  className,
  disabled,
}: Common & { value: string; onChange: (v: string) => void; children: ReactNode; disabled?: boolean }) {
  const id = useId();
  const reasons = useProblems(path ?? '\0');
  const describedBy = [hint ? `${id}-hint` : '', reasons.length ? `${id}-problem` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div className={`field ${className ?? ''}`}>
      <label htmlFor={id}>{label}</label>
      <select
        id={id}
        value={value}
        disabled={disabled}
        aria-invalid={reasons.length > 0 || undefined}
        aria-describedby={describedBy}
        onChange={(e) => onChange(e.target.value)}
      >
        {children}
      </select>
      {hint && (
        <small id={`${id}-hint`} className="muted">
          {hint}
        </small>
      )}
      <FieldProblems id={`${id}-problem`} reasons={reasons} />
    </div>
  );
}

export function TextBox({
  label,
  path,
  hint,
  value,
  onChange,
  rows = 4,
  readOnly,
}: Common & { value: string; onChange?: (v: string) => void; rows?: number; readOnly?: boolean }) {
  const id = useId();
  const reasons = useProblems(path ?? '\0');
  const describedBy = [hint ? `${id}-hint` : '', reasons.length ? `${id}-problem` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <textarea
        id={id}
        value={value}
        rows={rows}
        readOnly={readOnly}
        spellCheck={false}
        aria-invalid={reasons.length > 0 || undefined}
        aria-describedby={describedBy}
        onChange={(e) => onChange?.(e.target.value)}
      />
      {hint && (
        <small id={`${id}-hint`} className="muted">
          {hint}
        </small>
      )}
      <FieldProblems id={`${id}-problem`} reasons={reasons} />
    </div>
  );
}

export function Toggle({ label, checked, onChange, disabled }: { label: string; checked: boolean; onChange: (v: boolean) => void; disabled?: boolean }) {
  const id = useId();
  return (
    <div className="check">
      <input id={id} type="checkbox" checked={checked} disabled={disabled} onChange={(e) => onChange(e.target.checked)} />
      <label htmlFor={id}>{label}</label>
    </div>
  );
}

/** Problems that name a group (a rule, a split's weights) rather than one input. */
export function GroupProblems({ path }: { path: string }) {
  const reasons = useProblems(path, false);
  if (reasons.length === 0) return null;
  return (
    <p className="field-error" role="alert">
      {reasons.join('; ')}
    </p>
  );
}
