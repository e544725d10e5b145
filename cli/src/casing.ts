/** The casing transforms a slug can be searched under (`aliases.casings` of .flagpostrc.json). */
export const CASINGS = ['camelCase', 'PascalCase', 'snake_case', 'UPPER_SNAKE', 'kebab-case'] as const;
export type Casing = (typeof CASINGS)[number];

export function isCasing(value: unknown): value is Casing {
  return typeof value === 'string' && (CASINGS as readonly string[]).includes(value);
}

/**
 * The words of a slug: split at every character that is not a letter or digit (`.`, `-`, `_`) and at
 * camel-case humps ("newCheckout" is new + Checkout, "HTMLBanner" is HTML + Banner). Digits stay with
 * the word they follow ("header-v2" is header + v2).
 */
export function words(slug: string): string[] {
  return slug
    .split(/[^A-Za-z0-9]+/)
    .flatMap((part) =>
      part
        .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
        .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
        .split(' '),
    )
    .filter((word) => word !== '');
}

const capitalize = (word: string) => word.charAt(0).toUpperCase() + word.slice(1).toLowerCase();

/** One casing of a slug, e.g. toCasing('new-checkout', 'camelCase') is 'newCheckout'. */
export function toCasing(slug: string, casing: Casing): string {
  const parts = words(slug);
  switch (casing) {
    case 'camelCase':
      return parts.map((word, i) => (i === 0 ? word.toLowerCase() : capitalize(word))).join('');
    case 'PascalCase':
      return parts.map(capitalize).join('');
    case 'snake_case':
      return parts.map((word) => word.toLowerCase()).join('_');
    case 'UPPER_SNAKE':
      return parts.map((word) => word.toUpperCase()).join('_');
    case 'kebab-case':
      return parts.map((word) => word.toLowerCase()).join('-');
  }
}

/** The aliases of a slug under the given casings: distinct, non-empty, and never the slug itself. */
export function aliasesOf(slug: string, casings: readonly Casing[]): string[] {
  const out = new Set<string>();
  for (const casing of casings) {
    const alias = toCasing(slug, casing);
    if (alias !== '' && alias !== slug) out.add(alias);
  }
  return [...out];
}
