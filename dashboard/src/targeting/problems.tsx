import { createContext, useContext } from 'react';
import { ApiError, type FieldProblem } from '../api.ts';

// The field problems of the last refused save (a 400's `details`, `body.rules.0.conditions.1.values`),
// given to the editors below it, so that each input shows the problem that names it.

const Problems = createContext<FieldProblem[]>([]);
export const ProblemsProvider = Problems.Provider;

/** The details of an ApiError, with `body.` taken off the field names. */
export function problemsOf(error: unknown): FieldProblem[] {
  if (!(error instanceof ApiError)) return [];
  return error.details.map((d) => ({ field: d.field.replace(/^body\./, ''), reason: d.reason }));
}

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
