import type { FieldProblem, FlagType, VariantValue, Variants } from '../api.ts';
import { Field, GroupProblems, Select, TextArea } from '../ui/index.ts';

// Named variants of a flag, values typed by the flag's type: text, number, true/false, or a JSON object.

export interface VariantDraft {
  /** Local identity, so that a rename can follow the variant through the rules that serve it. */
  id: number;
  name: string;
  text: string;
}

let nextId = 1;
export const newVariantId = () => nextId++;

const valueText = (type: FlagType, v: VariantValue): string => (type === 'object' ? JSON.stringify(v, null, 2) : String(v));

export function toVariantDrafts(type: FlagType, variants: Variants): VariantDraft[] {
  return Object.entries(variants).map(([name, value]) => ({ id: newVariantId(), name, text: valueText(type, value) }));
}

export function emptyVariant(type: FlagType, existing: VariantDraft[]): VariantDraft {
  let n = existing.length + 1;
  while (existing.some((v) => v.name === `variant-${n}`)) n++;
  return { id: newVariantId(), name: `variant-${n}`, text: type === 'boolean' ? 'true' : type === 'number' ? '0' : type === 'object' ? '{}' : '' };
}

/** The variants to send, or the problems (with API paths) of the ones that are not of the flag's type. */
export function fromVariantDrafts(type: FlagType, drafts: VariantDraft[]): { variants: Variants; problems: FieldProblem[] } {
  const variants: Variants = {};
  const problems: FieldProblem[] = [];
  if (drafts.length === 0) problems.push({ field: 'variants', reason: 'A flag needs at least one variant' });
  drafts.forEach((d, i) => {
    const name = d.name.trim();
    const at = `variants.${name || i}`;
    if (name === '') problems.push({ field: `variants.${i}`, reason: 'Give the variant a name' });
    else if (Object.prototype.hasOwnProperty.call(variants, name)) problems.push({ field: at, reason: `Two variants are named ${name}` });
    if (type === 'string') variants[name] = d.text;
    else if (type === 'boolean') variants[name] = d.text === 'true';
    else if (type === 'number') {
      const n = Number(d.text);
      if (d.text.trim() === '' || !Number.isFinite(n)) problems.push({ field: `${at}.value`, reason: 'The value must be a number' });
      variants[name] = n;
    } else {
      let parsed: unknown;
      try {
        parsed = JSON.parse(d.text);
      } catch {
        parsed = undefined;
      }
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
        problems.push({ field: `${at}.value`, reason: 'The value must be a JSON object such as {"color": "blue"}' });
      else variants[name] = parsed as Record<string, unknown>;
    }
  });
  return { variants, problems };
}

/** The API path of a variant's problems: by name, or by position while it has none; its value's are at `<path>.value`. */
const pathOf = (d: VariantDraft, i: number) => `variants.${d.name.trim() || i}`;

export function VariantsEditor({
  type,
  variants,
  onChange,
  owner,
  disabled,
}: {
  type: FlagType;
  variants: VariantDraft[];
  onChange: (next: VariantDraft[]) => void;
  owner: string;
  disabled?: boolean;
}) {
  const set = (i: number, patch: Partial<VariantDraft>) => onChange(variants.map((v, j) => (j === i ? { ...v, ...patch } : v)));
  return (
    <div className="variants">
      <GroupProblems path="variants" />
      {variants.map((v, i) => (
        <fieldset key={v.id} className="variant">
          <legend>
            Variant {i + 1} of {owner}
          </legend>
          <div className="row">
            <Field label="Name" path={pathOf(v, i)} exactPath value={v.name} onChange={(name) => set(i, { name })} disabled={disabled} />
            {type === 'boolean' && (
              <Select label="Value" value={v.text} onChange={(text) => set(i, { text })} disabled={disabled}>
                <option value="true">true</option>
                <option value="false">false</option>
              </Select>
            )}
            {(type === 'string' || type === 'number') && (
              <Field
                className="grow"
                label="Value"
                type={type === 'number' ? 'number' : 'text'}
                step="any"
                path={`${pathOf(v, i)}.value`}
                value={v.text}
                onChange={(text) => set(i, { text })}
                disabled={disabled}
              />
            )}
            {type === 'object' && (
              <div className="grow">
                <TextArea
                  label="Value (JSON object)"
                  path={`${pathOf(v, i)}.value`}
                  value={v.text}
                  onChange={(text) => set(i, { text })}
                  rows={3}
                  spellCheck={false}
                  disabled={disabled}
                />
              </div>
            )}
            <button
              type="button"
              className="small danger-text"
              disabled={disabled || variants.length <= 1}
              onClick={() => onChange(variants.filter((_, j) => j !== i))}
            >
              Remove variant {v.name || i + 1}
            </button>
          </div>
        </fieldset>
      ))}
      <button type="button" className="small" disabled={disabled} onClick={() => onChange([...variants, emptyVariant(type, variants)])}>
        Add variant<span className="sr-only"> to {owner}</span>
      </button>
    </div>
  );
}
