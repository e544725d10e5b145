import assert from 'node:assert/strict';
import { it } from 'node:test';
import { DEFAULT_SCRYPT_COST, hashPassword, noUserHash, verifyPassword } from './password.ts';

it('hashes with N = 2^15, r = 8, p = 1 unless told otherwise, and records the cost in the hash', async () => {
  assert.deepEqual(DEFAULT_SCRYPT_COST, { N: 2 ** 15, r: 8, p: 1 });
  const production = await hashPassword('a long password here');
  assert.match(production, /^scrypt\$32768\$8\$1\$/);
  assert.ok(await verifyPassword('a long password here', production));
  assert.match(noUserHash(), /^scrypt\$32768\$8\$1\$/);
});

it('takes a cheaper cost where one is passed (tests), and verifies by the cost recorded in the hash', async () => {
  const cheap = await hashPassword('a long password here', { N: 2 ** 10, r: 8, p: 1 });
  assert.match(cheap, /^scrypt\$1024\$8\$1\$/);
  assert.ok(await verifyPassword('a long password here', cheap));
  assert.equal(await verifyPassword('another password', cheap), false);
  assert.match(noUserHash({ N: 2 ** 10, r: 8, p: 1 }), /^scrypt\$1024\$8\$1\$/);
});
