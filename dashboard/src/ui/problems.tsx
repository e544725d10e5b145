import { createContext, useContext } from 'react';
import type { FieldProblem } from '../api.ts';
import { humanProblems } from './errors.ts';

// The field problems of the last refused save (a 400's `details`, `body.rules.0.conditions.1.values`),
// given to the fields below it, so that each input shows the problem that names it, in words.

const Problems = createContext<FieldProblem[]>([]);
export const ProblemsProvider = Problems.Provider;

/** The details of an ApiError, with `body.` taken off the field names and the reasons in words. */
export const problemsOf = (error: unknown): FieldProblem[] => humanProblems(error);

/** The reasons given for the field at `path`, or (`within`) for anything below it too. */
export function useProblems(path: string, within = true): string[] {
  const all = useContext(Problems);
  return all.filter((p) => p.field === path || (within && p.field.startsWith(`${path}.`))).map((p) => p.reason);
}

/** A field's problems under it, referenced by the input's aria-describedby (`id`). */
export function FieldProblems({ id, reasons }: { id: string; reasons: string[] }) {
  if (reasons.length === 0) return null;
  return (
    <small id={id} className="field-error">
      {reasons.join('; ')}
    </small>
  );
}

/** Problems that name a group (a list, a rule, a split's weights) rather than one input, where the group starts. */
export function GroupProblems({ path }: { path: string }) {
  const reasons = useProblems(path, false);
  if (reasons.length === 0) return null;
  return (
    <p className="field-error" role="alert">
      {reasons.join('; ')}
    </p>
  );
}
