import { useMutation } from '@tanstack/react-query';
import { api, type Condition, type Form, type FormPatch } from '../api.ts';
import { type ConditionDraft, fromDraft, toDraft } from '../targeting/conditions.ts';

// Issue 34: the form's settings as the screen edits them (text typed in fields) and back to the PATCH body.
// Each group of the form's screen saves only its own settings, so a save never overwrites another group's.

/** One value per line, trimmed, empty lines dropped. */
export const lines = (text: string): string[] =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);

/** The trimmed text, or undefined when empty (an absent optional setting). */
export const optional = (text: string): string | undefined => (text.trim() === '' ? undefined : text.trim());

/** A whole number typed in a field: undefined when empty, NaN when not a whole number (the caller says so). */
export function wholeNumber(text: string): number | undefined {
  const t = text.trim();
  if (t === '') return undefined;
  return /^\d+$/.test(t) ? Number(t) : Number.NaN;
}

export const numberText = (n: number | null | undefined): string => (n === null || n === undefined ? '' : String(n));

/** The client's rule for a field that takes a whole number or nothing. */
export const wholeOrEmpty = (v: string) => (v.trim() === '' || /^\d+$/.test(v.trim()) ? undefined : 'Enter a whole number, or nothing');

export const conditionDrafts = (conditions: readonly Condition[] | undefined): ConditionDraft[] => (conditions ?? []).map(toDraft);

/** The conditions to send, or the first problem of their values (with the path of its values field). */
export function conditionsOf(drafts: ConditionDraft[], path: string): { conditions: Condition[] } | { problem: string } {
  const conditions: Condition[] = [];
  for (const [i, draft] of drafts.entries()) {
    const result = fromDraft(draft);
    if (result.problem !== undefined) return { problem: `${path} ${i + 1}: ${result.problem}` };
    conditions.push(result.condition);
  }
  return { conditions };
}

/** PATCH /forms/{key} with one group's settings; the group shows the refusal inline. */
export function usePatchForm(form: Form, success: string) {
  return useMutation({
    mutationFn: (body: FormPatch) => api<Form>('PATCH', `/forms/${encodeURIComponent(form.key)}`, body),
    meta: { success, error: false, invalidates: [['form', form.key], ['forms'], ['audit']] },
  });
}
