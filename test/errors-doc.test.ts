import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { messages } from '../src/errors.ts';

// docs/errors.md lists every client-visible message of the registry (style.md "Errors"). A row of any
// table whose first header cell is "Message" holds one message in backticks in its first cell, with
// `<name>` where the code has `{name}`. New messages and new rows are picked up without changing this file.

const DOC = new URL('../docs/errors.md', import.meta.url);

/** The registry's template as the docs spell it: `{name}` becomes `<name>`. */
const documented = (template: string): string => template.replace(/\{(\w+)\}/g, '<$1>');

/** Cells of a Markdown table row; `\|` is a pipe inside a cell. */
function cells(row: string): string[] {
  return row
    .trim()
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split(/(?<!\\)\|/)
    .map((cell) => cell.trim().replace(/\\\|/g, '|'));
}

interface Row {
  line: number;
  /** The message, or undefined when the Message cell is not one backticked text. */
  text: string | undefined;
  cell: string;
}

/** The first-column messages of every "Message" table, with their line numbers. */
function documentedMessages(markdown: string): Row[] {
  const found: Row[] = [];
  const lines = markdown.split('\n');
  let inMessageTable = false;
  for (const [index, line] of lines.entries()) {
    if (!line.trim().startsWith('|')) {
      inMessageTable = false;
      continue;
    }
    const row = cells(line);
    const previous = lines[index - 1]?.trim() ?? '';
    if (!previous.startsWith('|')) {
      inMessageTable = row[0]?.toLowerCase() === 'message';
      continue;
    }
    if (!inMessageTable || /^:?-+:?$/.test(row[0] ?? '')) continue;
    const cell = row[0] ?? '';
    found.push({ line: index + 1, text: /^`([^`]+)`$/.exec(cell)?.[1], cell });
  }
  return found;
}

describe('docs/errors.md and the message registry (src/errors.ts)', () => {
  const rows = documentedMessages(fs.readFileSync(DOC, 'utf8'));
  const inDocs = new Set(rows.map((r) => r.text));
  const messageRows = rows.filter((r): r is Row & { text: string } => r.text !== undefined);
  const inCode = new Map(Object.entries(messages).map(([key, template]) => [documented(template), key]));

  it('finds a message table in the document', () => {
    assert.ok(rows.length > 0, 'no table with a "Message" column in docs/errors.md');
  });

  it('has one message in backticks in the Message cell of every row', () => {
    const malformed = rows.filter((r) => r.text === undefined).map((r) => `line ${r.line}: ${r.cell}`);
    assert.deepEqual(malformed, []);
  });

  it('documents every message of the registry', () => {
    const missing = [...inCode].filter(([text]) => !inDocs.has(text)).map(([text, key]) => `${key}: ${text}`);
    assert.deepEqual(missing, [], 'messages of src/errors.ts missing from docs/errors.md');
  });

  it('documents only messages the registry has', () => {
    const unknown = messageRows.filter((r) => !inCode.has(r.text)).map((r) => `line ${r.line}: ${r.text}`);
    assert.deepEqual(unknown, [], 'messages in docs/errors.md that src/errors.ts does not have');
  });
});
