import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from './config.ts';

describe('loadConfig', () => {
  it('uses the documented defaults (contract D2)', () => {
    const config = loadConfig({});
    assert.equal(config.port, 3000);
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.databaseUrl, undefined);
    assert.equal(config.dataDir, path.resolve('./data'));
    assert.equal(config.forms.maxFileBytes, 1_048_576);
    assert.equal(config.forms.maxFiles, 5);
    assert.equal(config.publicUrl, 'http://localhost:3000');
    assert.ok(Object.isFrozen(config) && Object.isFrozen(config.forms));
  });

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '127.0.0.1',
      DATABASE_URL: 'postgres://u@h:5432/db',
      FLAGPOST_DATA_DIR: '/tmp/x',
      FLAGPOST_ADMIN_TOKEN: 'a-long-enough-token',
      FLAGPOST_PUBLIC_URL: 'https://flags.example.com/',
      FLAGPOST_MAX_FILE_BYTES: '2000000',
      FLAGPOST_MAX_FILES: '3',
      REDIS_URL: 'redis://127.0.0.1:6379',
      SMTP_URL: 'smtp://localhost:2525',
    });
    assert.equal(config.port, 8080);
    assert.equal(config.databaseUrl, 'postgres://u@h:5432/db');
    assert.equal(config.publicUrl, 'https://flags.example.com');
    assert.equal(config.forms.maxFileBytes, 2_000_000);
    assert.equal(config.forms.maxFiles, 3);
    assert.equal(config.redisUrl, 'redis://127.0.0.1:6379');
  });

  it('lists every bad variable at once', () => {
    try {
      loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x', FLAGPOST_ADMIN_TOKEN: 'short', LOG_LEVEL: 'loud', FLAGPOST_MAX_FILES: '-1' });
      assert.fail('expected a ConfigError');
    } catch (error) {
      assert.ok(error instanceof ConfigError);
      const text = error.problems.join('\n');
      for (const name of ['PORT', 'DATABASE_URL', 'FLAGPOST_ADMIN_TOKEN', 'LOG_LEVEL', 'FLAGPOST_MAX_FILES']) {
        assert.match(text, new RegExp(name));
      }
      assert.equal(error.problems.length, 5);
    }
  });
});
