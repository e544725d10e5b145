import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { foldAddress, personMatcher } from './person-match.ts';

/** Every character RFC 5322 allows in a dot-atom local part besides letters and digits. */
const ATEXT_SYMBOLS = [..."!#$%&'*+-/=?^_`{|}~."];

/** SQL LIKE as both engines run it on ASCII, with `\` as the escape character: a check of the pattern. */
function like(text: string, pattern: string): boolean {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') source += pattern[++i]!.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
    else if (c === '%') source += '[\\s\\S]*';
    else if (c === '_') source += '[\\s\\S]';
    else source += c.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, 'u').test(text);
}
/** What SQLite's lower() does without ICU: ASCII only (the weaker of the two engines). */
const asciiLower = (text: string) => text.replace(/[A-Z]/g, (c) => c.toLowerCase());

describe("whether a field value holds a person's address", () => {
  const cases: Array<[string, string, boolean]> = [
    ['brien@example.com', 'brien@example.com', true],
    ['brien@example.com', 'BRIEN@Example.COM', true],
    ['brien@example.com', 'write to brien@example.com, thanks', true],
    ['brien@example.com', '<brien@example.com>', true],
    ['brien@example.com', 'mailto:brien@example.com', true],
    ['brien@example.com', '"brien@example.com"', true],
    ['brien@example.com', 'brien@example.com.', true],
    ['brien@example.com', 'xbrien@example.com', false],
    ['brien@example.com', '7brien@example.com', false],
    ['brien@example.com', 'ébrien@example.com', false],
    ['brien@example.com', 'brien@example.com.evil.test', false],
    ['brien@example.com', 'brien@example.community', false],
    ['brien@example.com', 'brien@example.com-x.test', false],
    ['brien@example.com', 'brien@example.comé', false],
    ['brien@example.com', 'brien@example.com_x', false],
    ['brien@example.com', 'brien@example.com._x', false],
    ['brien@example.com', 'brien@example.com_', false],
    ['brien@example.com', 'brien@example.com; other', true],
    ['äda@example.com', 'ÄDA@example.com', true],
    ['ÄDA@example.com', 'äda@example.com', true],
    ['äda@example.com', 'A\u0308DA@example.com', true],
    ['äda@example.com', 'ada@example.com', false],
    ['ada@example.com', 'äda@example.com', false],
    ['kate@example.com', '\u212Aate@example.com', true],
    ['%@%', 'ada@example.com', false],
    ['a_b@example.com', 'axb@example.com', false],
  ];
  for (const symbol of ATEXT_SYMBOLS)
    cases.push(['brien@example.com', `o${symbol}brien@example.com`, false], ['brien@example.com', `${symbol}brien@example.com`, false]);
  for (const [address, value, expected] of cases) {
    it(`${expected ? 'finds' : 'does not find'} ${address} in ${JSON.stringify(value)}`, () => {
      const matcher = personMatcher(address);
      assert.equal(matcher.holds(value), expected);
      assert.equal(matcher.holds({ nested: [value] }), expected);
      // The SQL pre-filter never drops what holds() accepts, whichever way the engine lower-cases.
      if (expected) {
        assert.ok(like(asciiLower(JSON.stringify({ f: value })), matcher.likePattern), `${matcher.likePattern} on ASCII lower()`);
        assert.ok(like(JSON.stringify({ f: value }).toLowerCase(), matcher.likePattern), `${matcher.likePattern} on Unicode lower()`);
      }
    });
  }

  it('folds by NFC and Unicode lower-casing, not by the engine', () => {
    assert.equal(foldAddress('A\u0308DA@Example.COM'), 'äda@example.com');
    assert.equal(foldAddress('\u212Aate@example.com'), 'kate@example.com');
  });

  it('escapes LIKE wildcards and keeps non-ASCII out of the SQL pattern', () => {
    assert.equal(personMatcher('a_b%c@example.com').likePattern, '%a\\_b\\%c@example.com%');
    assert.equal(personMatcher('äda@example.com').likePattern, '%da@example.com%');
  });
});
