import { fieldLabel } from '../ui/index.ts';
import { changeInWords, valueInWords } from './describe.ts';

// How every screen shows a change of a field (issue 31 item 3): a change request, the history and the
// comparison of environments say the same thing the same way. Targeting in words, one line each; a short
// value as before → after; a long one cut to a line that opens to the whole value (nothing is lost to "…").

/** The text of a TipTap (ProseMirror) document; undefined for anything else. */
export function richText(value: unknown): string | undefined {
  if (!value || typeof value !== 'object' || (value as { type?: unknown }).type !== 'doc') return undefined;
  const parts: string[] = [];
  const walk = (node: unknown) => {
    if (!node || typeof node !== 'object') return;
    const n = node as { type?: string; text?: string; content?: unknown[] };
    if (typeof n.text === 'string') parts.push(n.text);
    for (const child of n.content ?? []) walk(child);
    if (n.type === 'paragraph' || n.type === 'heading' || n.type === 'listItem') parts.push('\n');
  };
  walk(value);
  return parts.join('').trim().replace(/\n+/g, ' / ');
}

/** A value whole: on/off, strings as they are, rich text as its text, a list of strings as a list, the rest as JSON (indented when `pretty`). */
export function fullText(value: unknown, pretty = false): string {
  if (value === undefined) return '';
  if (value === null || value === '') return 'none';
  if (typeof value === 'boolean') return value ? 'on' : 'off';
  if (typeof value === 'string') return value;
  const text = richText(value);
  if (text !== undefined) return text === '' ? '(empty text)' : `“${text}”`;
  // A list of names (a webhook's events, a project's environments, tags) as words, not JSON.
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value.length === 0 ? 'none' : value.join(', ');
  return pretty ? JSON.stringify(value, null, 2) : JSON.stringify(value);
}

const SHORT = 160;

/** A value in one line (cut at 160 characters). */
export const show = (value: unknown): string => {
  const text = fullText(value);
  return text.length > SHORT ? `${text.slice(0, SHORT - 3)}…` : text;
};

const FIELD_NAMES: Record<string, string> = {
  release: 'Written by',
  enabled: 'Enabled',
  previewContent: 'Preview text',
  expiredAt: 'Expiry',
  isPreview: 'Preview flag',
};

export const changeLabel = (field: string): string => FIELD_NAMES[field] ?? fieldLabel(field);

/** One value, struck out (before) or inserted (after); a long one opens to the whole of it. */
function Value({ field, value, as: Tag }: { field: string; value: unknown; as: 'del' | 'ins' }) {
  const words = valueInWords(field, value);
  if (words !== undefined) return <Tag>{words}</Tag>;
  const line = show(value);
  if (line === fullText(value)) return <Tag>{line}</Tag>;
  return (
    <details className="long-value">
      <summary>
        <Tag>{line}</Tag> <span className="muted">(show all)</span>
      </summary>
      <pre>
        <Tag>{fullText(value, true)}</Tag>
      </pre>
    </details>
  );
}

/** One field's change as a list item: `before` absent for what a creation set, `after` absent for what a deletion removed. */
export function ChangeLine({ field, change }: { field: string; change: { before?: unknown; after?: unknown } }) {
  const label = changeLabel(field);
  const words = 'after' in change ? changeInWords(field, change.before, change.after) : undefined;
  if (words && words.length > 0) {
    return (
      <li>
        <strong>{label}</strong>:
        <ul className="plain words">
          {words.map((line, i) => (
            <li key={i}>{line.startsWith('added ') ? <ins>{line}</ins> : line.startsWith('removed ') ? <del>{line}</del> : line}</li>
          ))}
        </ul>
      </li>
    );
  }
  return (
    <li>
      <strong>{label}</strong>:{' '}
      {'before' in change && 'after' in change ? (
        <>
          <Value field={field} value={change.before} as="del" /> → <Value field={field} value={change.after} as="ins" />
        </>
      ) : 'before' in change ? (
        <Value field={field} value={change.before} as="del" />
      ) : (
        <Value field={field} value={change.after} as="ins" />
      )}
    </li>
  );
}

/** Differences of a configuration (`from` as it is, `to` as it becomes), one line per field. */
export function Differences({ differences, label }: { differences: ReadonlyArray<{ field: string; from: unknown; to: unknown }>; label: string }) {
  return (
    <ul className="plain diff" aria-label={label}>
      {differences.map((d) => (
        <ChangeLine key={d.field} field={d.field} change={{ before: d.from, after: d.to }} />
      ))}
    </ul>
  );
}
