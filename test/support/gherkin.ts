import fs from 'node:fs';
import path from 'node:path';

// A small reader for the Gherkin the flagd testbed uses: Feature (with tags), Background, Scenario and
// Scenario Outline (with tags), steps with data tables, Examples blocks (with tags and a name) whose
// rows expand an outline into concrete scenarios. Comments (#) and blank lines are skipped.

export interface Step {
  /** The step text without its keyword, placeholders filled in (`a String-flag with key "x" ...`). */
  text: string;
  keyword: string;
  /** A data table under the step: the first row is the header. */
  table?: Array<Record<string, string>>;
}

export interface Scenario {
  file: string;
  feature: string;
  /** `Scenario name [Examples name, row n]` for outlines. */
  name: string;
  /** Feature, scenario and examples tags, with their `@`. */
  tags: string[];
  /** Background steps first. */
  steps: Step[];
}

const cellsOf = (line: string): string[] =>
  line
    .trim()
    .replace(/^\||\|$/g, '')
    .split(/(?<!\\)\|/)
    .map((c) => c.trim().replace(/\\\|/g, '|').replace(/\\n/g, '\n').replace(/\\\\/g, '\\'));

function tableOf(rows: string[][]): Array<Record<string, string>> {
  const [header, ...body] = rows;
  return body.map((row) => Object.fromEntries(header!.map((h, i) => [h, row[i] ?? ''])));
}

interface Block {
  kind: 'background' | 'scenario' | 'outline';
  name: string;
  tags: string[];
  steps: Array<{ keyword: string; text: string; rows: string[][] }>;
  examples: Array<{ name: string; tags: string[]; rows: string[][] }>;
}

/** The concrete scenarios of one .feature file. */
export function parseFeature(file: string, source: string): Scenario[] {
  let feature = '';
  let featureTags: string[] = [];
  let pendingTags: string[] = [];
  const blocks: Block[] = [];
  let current: Block | undefined;
  let rowsTarget: string[][] | undefined;
  for (const raw of source.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    if (line.startsWith('@')) {
      pendingTags.push(...line.split(/\s+/).filter((t) => t.startsWith('@')));
      continue;
    }
    if (line.startsWith('|')) {
      rowsTarget?.push(cellsOf(line));
      continue;
    }
    const heading = /^(Feature|Background|Scenario Outline|Scenario Template|Scenario|Example|Examples|Scenarios):\s*(.*)$/.exec(line);
    if (heading) {
      const [, keyword, name] = heading;
      if (keyword === 'Feature') {
        feature = name!;
        featureTags = pendingTags;
      } else if (keyword === 'Examples' || keyword === 'Scenarios') {
        const examples = { name: name!, tags: pendingTags, rows: [] as string[][] };
        current?.examples.push(examples);
        rowsTarget = examples.rows;
      } else {
        const kind = keyword === 'Background' ? 'background' : keyword!.startsWith('Scenario ') ? 'outline' : 'scenario';
        current = { kind, name: name!, tags: pendingTags, steps: [], examples: [] };
        blocks.push(current);
        rowsTarget = undefined;
      }
      pendingTags = [];
      continue;
    }
    const step = /^(Given|When|Then|And|But|\*)\s+(.*)$/.exec(line);
    if (step && current) {
      const s = { keyword: step[1]!, text: step[2]!, rows: [] as string[][] };
      current.steps.push(s);
      rowsTarget = s.rows;
      continue;
    }
    throw new Error(`${file}: cannot read line: ${line}`);
  }
  const background = blocks.filter((b) => b.kind === 'background').flatMap((b) => b.steps);
  const out: Scenario[] = [];
  const toSteps = (steps: Block['steps'], values: Record<string, string>): Step[] =>
    steps.map((s) => {
      const fill = (text: string) => text.replace(/<([^<>]+)>/g, (m, name: string) => values[name] ?? m);
      const step: Step = { keyword: s.keyword, text: fill(s.text) };
      if (s.rows.length > 0) step.table = tableOf(s.rows.map((r) => r.map(fill)));
      return step;
    });
  for (const block of blocks) {
    if (block.kind === 'background') continue;
    const base = { file, feature, tags: [...featureTags, ...block.tags] };
    if (block.kind === 'scenario' || block.examples.length === 0) {
      out.push({ ...base, name: block.name, steps: toSteps([...background, ...block.steps], {}) });
      continue;
    }
    for (const examples of block.examples) {
      tableOf(examples.rows).forEach((values, i) => {
        const label = `${block.name} [${examples.name ? examples.name + ', ' : ''}row ${i + 1}]`;
        out.push({ ...base, name: label, tags: [...base.tags, ...examples.tags], steps: toSteps([...background, ...block.steps], values) });
      });
    }
  }
  return out;
}

/** Every scenario of every .feature file in a folder, files in name order. */
export function readFeatures(dir: string): Scenario[] {
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.feature'))
    .sort()
    .flatMap((f) => parseFeature(f, fs.readFileSync(path.join(dir, f), 'utf8')));
}
