import assert from 'node:assert/strict';
import http2 from 'node:http2';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createTestContext, type TestContext } from '../support/context.ts';

// Issue 29 item 8: the flagd sync port takes unauthenticated HTTP/2 connections, so it bounds them: in
// all and per client key, closed when idle, asked to go away when old. Real sockets on loopback; the
// addresses 127.0.0.2 and 127.0.0.3 are other clients (Linux routes all of 127/8 to loopback).

/** An HTTP/2 connection from `localAddress`: 'accepted' once the server's settings arrive, 'refused' if it closes first. */
function h2From(port: number, localAddress: string): Promise<{ outcome: 'accepted' | 'refused'; session: http2.ClientHttp2Session }> {
  return new Promise((resolve) => {
    const session = http2.connect(`http://127.0.0.1:${port}`, { localAddress } as http2.SecureClientSessionOptions);
    session.on('error', () => {});
    session.once('remoteSettings', () => resolve({ outcome: 'accepted', session }));
    session.once('close', () => resolve({ outcome: 'refused', session }));
  });
}

const closed = (session: http2.ClientHttp2Session) =>
  new Promise<void>((resolve) => (session.closed || session.destroyed ? resolve() : session.once('close', resolve)));

describe('flagd sync port: connection caps and idle limit (issue 29)', () => {
  let ctx: TestContext;
  let port: number;
  const open: http2.ClientHttp2Session[] = [];

  before(async () => {
    ctx = await createTestContext('sqlite', {
      FLAGPOST_FLAGD_SYNC_MAX_CONNECTIONS: '5',
      FLAGPOST_FLAGD_SYNC_MAX_CONNECTIONS_PER_CLIENT: '3',
      FLAGPOST_FLAGD_SYNC_IDLE_MS: '400',
    });
    port = await ctx.services.flagdSyncServer.listen('127.0.0.1', 0);
  });
  /** Until the server has seen every connection close (it counts them as their sockets close). */
  const drained = async () => {
    while (ctx.services.flagdSyncServer.connectionCount > 0) await new Promise((resolve) => setTimeout(resolve, 20));
  };
  after(async () => {
    for (const session of open) session.destroy();
    await ctx?.close();
  });

  it('closes connections past the cap per client and in all as they arrive', async () => {
    const from = async (address: string) => {
      const { outcome, session } = await h2From(port, address);
      open.push(session);
      return outcome;
    };
    assert.deepEqual([await from('127.0.0.1'), await from('127.0.0.1'), await from('127.0.0.1')], ['accepted', 'accepted', 'accepted']);
    assert.equal(await from('127.0.0.1'), 'refused', 'a fourth connection of one client');
    assert.deepEqual([await from('127.0.0.2'), await from('127.0.0.2')], ['accepted', 'accepted']);
    assert.equal(await from('127.0.0.3'), 'refused', 'a sixth connection in all');
    assert.equal(ctx.services.flagdSyncServer.connectionCount, 5);
    assert.ok(ctx.services.flagdSyncServer.refusedConnections >= 2);
  });

  it('closes idle connections, HTTP/2 or silent TCP, which frees the slots', { timeout: 30_000 }, async () => {
    await Promise.all(open.map(closed));
    await drained();
    const silent = net.connect({ port, host: '127.0.0.1', localAddress: '127.0.0.4' });
    silent.on('error', () => {});
    // Read what the server sends (its HTTP/2 settings), so that its end is seen.
    silent.resume();
    await new Promise<void>((resolve) => silent.once('close', () => resolve()));
    await drained();
    const again = await h2From(port, '127.0.0.1');
    assert.equal(again.outcome, 'accepted', 'the closed connections no longer count');
    again.session.destroy();
  });

  it('keeps the main port answering while the sync port is full', async () => {
    const full = await Promise.all(['127.0.0.5', '127.0.0.5', '127.0.0.5', '127.0.0.6', '127.0.0.6'].map((a) => h2From(port, a)));
    assert.deepEqual(
      full.map((f) => f.outcome),
      ['accepted', 'accepted', 'accepted', 'accepted', 'accepted'],
    );
    assert.equal((await ctx.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
    for (const f of full) f.session.destroy();
    await drained();
  });
});

describe('flagd sync port: connection age (issue 29)', () => {
  let ctx: TestContext;
  let port: number;

  before(async () => {
    ctx = await createTestContext('sqlite', { FLAGPOST_FLAGD_SYNC_IDLE_MS: '3600000', FLAGPOST_FLAGD_SYNC_MAX_AGE_MS: '1000' });
    port = await ctx.services.flagdSyncServer.listen('127.0.0.1', 0);
  });
  after(async () => ctx?.close());

  it('asks a connection to go away once it reaches its age', { timeout: 30_000 }, async () => {
    const { outcome, session } = await h2From(port, '127.0.0.1');
    assert.equal(outcome, 'accepted');
    await new Promise<void>((resolve) => session.once('goaway', () => resolve()));
    session.destroy();
  });
});
