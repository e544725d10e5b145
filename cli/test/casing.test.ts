import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { aliasesOf, CASINGS, toCasing, words } from '../src/casing.ts';

describe('casing transforms of slugs', () => {
  it('splits slugs into words at separators and camel-case humps', () => {
    assert.deepEqual(words('new-checkout'), ['new', 'checkout']);
    assert.deepEqual(words('header.v2'), ['header', 'v2']);
    assert.deepEqual(words('beta_banner--x'), ['beta', 'banner', 'x']);
    assert.deepEqual(words('newCheckoutFlow'), ['new', 'Checkout', 'Flow']);
    assert.deepEqual(words('HTMLBanner'), ['HTML', 'Banner']);
    assert.deepEqual(words('---'), []);
  });

  const table: Array<[string, Record<(typeof CASINGS)[number], string>]> = [
    [
      'new-checkout',
      { camelCase: 'newCheckout', PascalCase: 'NewCheckout', snake_case: 'new_checkout', UPPER_SNAKE: 'NEW_CHECKOUT', 'kebab-case': 'new-checkout' },
    ],
    ['header.v2', { camelCase: 'headerV2', PascalCase: 'HeaderV2', snake_case: 'header_v2', UPPER_SNAKE: 'HEADER_V2', 'kebab-case': 'header-v2' }],
    ['beta_banner', { camelCase: 'betaBanner', PascalCase: 'BetaBanner', snake_case: 'beta_banner', UPPER_SNAKE: 'BETA_BANNER', 'kebab-case': 'beta-banner' }],
    ['darkMode', { camelCase: 'darkMode', PascalCase: 'DarkMode', snake_case: 'dark_mode', UPPER_SNAKE: 'DARK_MODE', 'kebab-case': 'dark-mode' }],
    ['API-key.2fa', { camelCase: 'apiKey2fa', PascalCase: 'ApiKey2fa', snake_case: 'api_key_2fa', UPPER_SNAKE: 'API_KEY_2FA', 'kebab-case': 'api-key-2fa' }],
    ['x', { camelCase: 'x', PascalCase: 'X', snake_case: 'x', UPPER_SNAKE: 'X', 'kebab-case': 'x' }],
  ];
  for (const [slug, expected] of table) {
    it(`transforms ${slug}`, () => {
      for (const casing of CASINGS) assert.equal(toCasing(slug, casing), expected[casing], `${slug} as ${casing}`);
    });
  }

  it('gives distinct aliases, never the slug itself', () => {
    assert.deepEqual(aliasesOf('new-checkout', CASINGS), ['newCheckout', 'NewCheckout', 'new_checkout', 'NEW_CHECKOUT']);
    assert.deepEqual(aliasesOf('beta_banner', ['snake_case']), []);
    assert.deepEqual(aliasesOf('a', ['camelCase', 'snake_case', 'kebab-case']), []);
    assert.deepEqual(aliasesOf('a', []), []);
  });
});
