import { CASE_OPERATORS, type ConditionDraft, emptyCondition, LIST_OPERATORS, OPERATORS, typeOf, type ValueType } from './conditions.ts';
import { Checkbox, Field, GroupProblems, Select } from '../ui/index.ts';

// The condition editor shared by rules and segments: attribute (dot path), not, operator, case, values.

const VALUE_HINT: Partial<Record<string, string>> = {
  in: 'Separate values with commas (write \\, for a comma inside a value)',
  equals: 'Matches any of them; separate values with commas',
  inCidr: 'CIDRs separated by commas: 10.0.0.0/8, 2001:db8::/32',
  before: 'An ISO-8601 date (2026-01-31 or 2026-01-31T12:00:00Z) or now',
  after: 'An ISO-8601 date (2026-01-31 or 2026-01-31T12:00:00Z) or now',
  matches: 'A regular expression (linear-time: no back-references or look-around)',
};

export function ConditionsEditor({
  conditions,
  onChange,
  path,
  owner,
  disabled,
}: {
  conditions: ConditionDraft[];
  onChange: (next: ConditionDraft[]) => void;
  /** API path of the list (`conditions`, `rules.0.conditions`). */
  path: string;
  /** Who the conditions belong to, for labels: `rule 1`, `segment beta`. */
  owner: string;
  disabled?: boolean;
}) {
  const set = (i: number, patch: Partial<ConditionDraft>) => onChange(conditions.map((c, j) => (j === i ? { ...c, ...patch } : c)));
  return (
    <div className="conditions">
      <GroupProblems path={path} />
      {conditions.length === 0 && <p className="muted">No condition.</p>}
      {conditions.map((c, i) => {
        const at = `${path}.${i}`;
        const type = typeOf(c);
        return (
          <fieldset key={i} className="condition">
            <legend>
              Condition {i + 1} of {owner}
            </legend>
            <div className="row">
              <Field label="Attribute" path={`${at}.attribute`} value={c.attribute} onChange={(v) => set(i, { attribute: v })} placeholder="user.country" />
              <Checkbox label="Negate (does not match)" checked={c.negate} onChange={(v) => set(i, { negate: v })} />
              <Select label="Operator" path={`${at}.operator`} value={c.operator} onChange={(v) => set(i, { operator: v as ConditionDraft['operator'] })}>
                {OPERATORS.map((o) => (
                  <option key={o.value} value={o.value}>
                    {o.label}
                  </option>
                ))}
              </Select>
              {CASE_OPERATORS.has(c.operator) && type === 'string' && (
                <Checkbox label="Ignore case" checked={c.caseInsensitive} onChange={(v) => set(i, { caseInsensitive: v })} />
              )}
              {(c.operator === 'equals' || c.operator === 'in') && (
                <Select label="Values are" value={c.valueType} onChange={(v) => set(i, { valueType: v as ValueType })}>
                  <option value="string">text</option>
                  <option value="number">numbers</option>
                  <option value="boolean">true/false</option>
                </Select>
              )}
              {c.operator !== 'exists' && (
                <Field
                  className="grow"
                  label={LIST_OPERATORS.has(c.operator) ? 'Values' : 'Value'}
                  path={`${at}.values`}
                  value={c.text}
                  type={type === 'number' && !LIST_OPERATORS.has(c.operator) ? 'number' : 'text'}
                  step="any"
                  onChange={(v) => set(i, { text: v })}
                  hint={VALUE_HINT[c.operator]}
                />
              )}
              <button type="button" className="small danger-text" disabled={disabled} onClick={() => onChange(conditions.filter((_, j) => j !== i))}>
                Remove condition {i + 1}
                <span className="sr-only"> of {owner}</span>
              </button>
            </div>
          </fieldset>
        );
      })}
      <button type="button" className="small" disabled={disabled} onClick={() => onChange([...conditions, emptyCondition()])}>
        Add condition<span className="sr-only"> to {owner}</span>
      </button>
    </div>
  );
}
