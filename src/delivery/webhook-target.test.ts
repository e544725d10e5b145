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
    // Issue 29: IPv4-compatible, 6to4 and Teredo addresses, and an IPv4-mapped one written in hex.
    ['::7f00:1', 'public', false],
    ['::127.0.0.1', 'public', false],
    ['::808:808', 'public', false],
    ['::a9fe:a9fe', 'private', false],
    ['2002:7f00:1::', 'public', false],
    ['2002:a9fe:a9fe::1', 'private', false],
    ['2002:a00:1::1', 'private', true],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'public', false],
    ['2001:0:a9fe:a9fe::1', 'private', false],
    ['::ffff:a00:1', 'public', false],
    ['::ffff:a9fe:a9fe', 'private', false],
    ['2001:4860:4860::8888', 'public', true],
    ['169.254.169.254', 'any', true],
    ['127.0.0.1', 'any', true],
  ];
  for (const [address, policy, allowed] of table) {
    it(`${allowed ? 'allows' : 'refuses'} ${address} under ${policy}`, () => {
      assert.equal(refusedTarget(address, policy) === undefined, allowed, refusedTarget(address, policy));
    });
  }
});
