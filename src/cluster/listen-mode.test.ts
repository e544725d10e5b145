import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { supportsReusePort } from './listen-mode.ts';

describe('supportsReusePort', () => {
  it('is true on Linux from Node 22.12 and 23.1, where listen() takes reusePort', () => {
    for (const version of ['22.12.0', 'v22.20.1', '23.1.0', '24.18.1', '26.0.0']) assert.equal(supportsReusePort(version, 'linux'), true, version);
  });

  it('is false on older Node and on other systems, which use the cluster module', () => {
    for (const version of ['20.20.2', '22.11.0', '23.0.0']) assert.equal(supportsReusePort(version, 'linux'), false, version);
    assert.equal(supportsReusePort('24.18.1', 'darwin'), false);
    assert.equal(supportsReusePort('24.18.1', 'win32'), false);
  });
});
