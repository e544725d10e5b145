import { type Casing, aliasesOf } from './casing.ts';

// Finding slugs in a text: every slug (and alias) between double quotes, single quotes or backticks, with
// one regular expression for all of them; the configuration's own patterns (capture group 1 is the slug
// or an alias); and Basestack's `useFlag("x")` and `<Feature slug="x">`, to notice slugs that the
// environment does not know.

export interface Match {
  /** The slug the match is reported under (an alias is reported under its slug). */
  slug: string;
  /** False for a slug the environment does not know (found by a pattern only). */
  known: boolean;
  /** Where the matched name starts in the text. */
  index: number;
  /** The length of the matched name. */
  length: number;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');

/** Basestack's React SDK: `useFlag("x")` (with an optional type argument) and `<Feature slug="x">` (or slug={"x"}). */
export const BASESTACK_PATTERNS: readonly RegExp[] = [
  /\buseFlag\s*(?:<[^>()]*>)?\s*\(\s*(["'`])([^"'`\r\n]{1,200}?)\1/g,
  /<Feature\b[^>]*?\bslug\s*=\s*\{?\s*(["'`])([^"'`\r\n]{1,200}?)\1/g,
];

export interface MatcherOptions {
  casings: readonly Casing[];
  patterns: readonly string[];
}

export class Matcher {
  /** Every searched name (slug or alias) and the slugs it stands for. */
  readonly names = new Map<string, string[]>();
  private readonly quoted: RegExp | undefined;
  private readonly patterns: RegExp[];

  constructor(slugs: readonly string[], options: MatcherOptions) {
    const exact = new Set(slugs);
    for (const slug of exact) this.names.set(slug, [slug]);
    for (const slug of exact) {
      for (const alias of aliasesOf(slug, options.casings)) {
        // A name that is itself a slug stands for that slug only.
        if (exact.has(alias)) continue;
        const list = this.names.get(alias);
        if (list) list.push(slug);
        else this.names.set(alias, [slug]);
      }
    }
    const alternatives = [...this.names.keys()].sort((a, b) => b.length - a.length || (a < b ? -1 : 1)).map(escapeRegExp);
    this.quoted = alternatives.length > 0 ? new RegExp(`(["'\`])(${alternatives.join('|')})\\1`, 'g') : undefined;
    // 'd' for the position of group 1, 'm' so that ^ and $ are line starts and ends.
    this.patterns = options.patterns.map((pattern) => new RegExp(pattern, 'gmd'));
  }

  /** Every match in a text, in no particular order; one name can give several matches (an alias shared by slugs). */
  find(text: string): Match[] {
    const out: Match[] = [];
    if (this.quoted) {
      for (const m of text.matchAll(this.quoted)) {
        const name = m[2]!;
        for (const slug of this.names.get(name)!) out.push({ slug, known: true, index: m.index + 1, length: name.length });
      }
    }
    for (const pattern of this.patterns) {
      for (const m of text.matchAll(pattern)) {
        const name = m[1];
        if (name === undefined || name === '') continue;
        const index = m.indices?.[1]?.[0] ?? m.index;
        const slugs = this.names.get(name);
        if (slugs) for (const slug of slugs) out.push({ slug, known: true, index, length: name.length });
        else out.push({ slug: name, known: false, index, length: name.length });
      }
    }
    if (text.includes('useFlag') || text.includes('<Feature')) {
      for (const pattern of BASESTACK_PATTERNS) {
        for (const m of text.matchAll(pattern)) {
          const name = m[2]!;
          // A known name was found between quotes already.
          if (!this.names.has(name)) out.push({ slug: name, known: false, index: m.index + m[0].length - 1 - name.length, length: name.length });
        }
      }
    }
    return out;
  }
}
