import type { FlagEntry, Prerequisite } from '../api.ts';
import { Checkbox, GroupProblems, Select } from '../ui/index.ts';

// Flags this flag depends on: it serves its default unless each of them evaluates, for the same
// context, to one of the variants chosen here.

export function PrerequisitesEditor({
  prerequisites,
  onChange,
  flags,
  slug,
  envKey,
  disabled,
}: {
  prerequisites: Prerequisite[];
  onChange: (next: Prerequisite[]) => void;
  /** Every flag of the project (the candidates, with their variants per environment). */
  flags: FlagEntry[];
  slug: string;
  envKey: string;
  disabled?: boolean;
}) {
  const candidates = flags.filter((f) => f.slug !== slug);
  const variantsOf = (flag: string) => Object.keys(flags.find((f) => f.slug === flag)?.environments.find((e) => e.environment.key === envKey)?.variants ?? {});
  const set = (i: number, next: Prerequisite) => onChange(prerequisites.map((p, j) => (j === i ? next : p)));
  return (
    <div className="prerequisites">
      <GroupProblems path="prerequisites" />
      {prerequisites.length === 0 && <p className="muted">No prerequisite.</p>}
      {prerequisites.map((p, i) => {
        const at = `prerequisites.${i}`;
        const names = variantsOf(p.flag);
        return (
          <fieldset key={i} className="prerequisite">
            <legend>Prerequisite {i + 1}</legend>
            <div className="row">
              <Select label="Flag" path={`${at}.flag`} value={p.flag} onChange={(flag) => set(i, { flag, variants: [] })}>
                {p.flag === '' && <option value="">Choose a flag</option>}
                {!candidates.some((f) => f.slug === p.flag) && p.flag !== '' && <option value={p.flag}>{p.flag}</option>}
                {candidates.map((f) => (
                  <option key={f.slug} value={f.slug}>
                    {f.slug}
                  </option>
                ))}
              </Select>
              <fieldset className="checks">
                <legend>Serves one of (prerequisite {i + 1})</legend>
                <GroupProblems path={`${at}.variants`} />
                {names.length === 0 && <p className="muted">Choose a flag first.</p>}
                {[...names, ...p.variants.filter((v) => !names.includes(v))].map((v) => (
                  <Checkbox
                    key={v}
                    label={v}
                    checked={p.variants.includes(v)}
                    onChange={(on) => set(i, { ...p, variants: on ? [...p.variants, v] : p.variants.filter((x) => x !== v) })}
                  />
                ))}
              </fieldset>
              <button type="button" className="small danger-text" disabled={disabled} onClick={() => onChange(prerequisites.filter((_, j) => j !== i))}>
                Remove prerequisite {i + 1}
              </button>
            </div>
          </fieldset>
        );
      })}
      <button
        type="button"
        className="small"
        disabled={disabled || candidates.length === 0}
        onClick={() => onChange([...prerequisites, { flag: '', variants: [] }])}
      >
        Add prerequisite
      </button>
    </div>
  );
}
