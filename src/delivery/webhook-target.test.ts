import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { refusedTarget, type WebhookTargetPolicy } from './webhook-target.ts';

// Decisions only: no request is sent (the network rule of the test suite).
describe('webhook target policy', () => {
  const table: Array<[string, WebhookTargetPolicy, boolean]> = [
    ['93.184.216.34', 'public', true],
    ['2606:2800:220:1:248:1893:25c8:1946', 'public', true],
    ['127.0.0.1', 'public', false],
    ['::1', 'public', false],
    ['10.1.2.3', 'public', false],
    ['172.20.0.5', 'public', false],
    ['192.168.1.10', 'public', false],
    ['100.64.0.1', 'public', false],
    ['0.0.0.0', 'public', false],
    ['fd12:3456::1', 'public', false],
    ['::ffff:10.0.0.1', 'public', false],
    ['::ffff:93.184.216.34', 'public', true],
    ['169.254.169.254', 'public', false],
    ['127.0.0.1', 'private', true],
    ['10.1.2.3', 'private', true],
    ['fd12:3456::1', 'private', true],
    ['169.254.169.254', 'private', false],
    ['fe80::1', 'private', false],
    ['fd00:ec2::254', 'private', false],
    ['::ffff:169.254.169.254', 'private', false],
    ['169.254.169.254', 'any', true],
    ['127.0.0.1', 'any', true],
  ];
  for (const [address, policy, allowed] of table) {
    it(`${allowed ? 'allows' : 'refuses'} ${address} under ${policy}`, () => {
      assert.equal(refusedTarget(address, policy) === undefined, allowed, refusedTarget(address, policy));
    });
  }
});
