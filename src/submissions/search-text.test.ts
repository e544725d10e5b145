import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fts5Match, MAX_QUERY_WORDS, MAX_SEARCH_CHARS, queryWords, searchText, tsQuery } from './search-text.ts';

describe('search text', () => {
  const cases: Array<[string, unknown, string]> = [
    ['indexes the values of fields, not their names', { email: 'Ann@Example.com', message: 'Hello there' }, 'ann example com hello there'],
    ['folds accents and case', { name: 'Zoë ÉLODIE' }, 'zoe elodie'],
    ['takes numbers and booleans as words', { n: 42, ok: true }, '42 true'],
    ['takes every value of a repeated field', { topic: ['sales', 'support'] }, 'sales support'],
    ['ignores null', { a: null }, ''],
    ['keeps letters of other scripts (their marks folded like accents)', { name: 'Дмитрий 山田' }, 'дмитрии 山田'],
  ];
  for (const [name, data, text] of cases) it(name, () => assert.equal(searchText(data), text));

  it('stops at MAX_SEARCH_CHARS characters', () => {
    assert.equal(searchText({ a: 'word '.repeat(MAX_SEARCH_CHARS) }).length, MAX_SEARCH_CHARS);
  });

  const queries: Array<[string, string, string[]]> = [
    ['splits a query into words', 'Ann  Example', ['ann', 'example']],
    ['drops FTS5 syntax: quotes, stars, operators, parentheses, column filters', '"ann" OR body:x* (NEAR) -^', ['ann', 'or', 'body', 'x', 'near']],
    ['drops tsquery syntax', "a & !b | c:* <-> 'd'", ['a', 'b', 'c', 'd']],
    ['finds nothing in punctuation alone', '"*:()', []],
    ['counts each word once', 'a a A', ['a']],
  ];
  for (const [name, q, words] of queries) it(name, () => assert.deepEqual(queryWords(q), words));

  it('keeps at most MAX_QUERY_WORDS words', () => {
    assert.equal(queryWords('a b c d e f g h i j k').length, MAX_QUERY_WORDS);
  });

  it('writes prefix queries for both engines', () => {
    assert.equal(fts5Match(['ann', 'ex']), '"ann"* AND "ex"*');
    assert.equal(tsQuery(['ann', 'ex']), 'ann:* & ex:*');
  });
});
