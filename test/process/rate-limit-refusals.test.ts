import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { before, it } from 'node:test';
import { forEachDialect } from '../support/context.ts';
import { createProject, keys, type ProjectFixture } from '../support/fixtures.ts';

const ip = () => `10.${[...randomBytes(3)].join('.')}`;

// Refused requests count against the limit too (contract D20): otherwise API keys and form keys could be
// guessed at any speed, since every wrong guess is refused before it would have been counted.
forEachDialect(
  'rate limits count refused requests',
  (ctx) => {
    let project: ProjectFixture;
    before(async () => {
      project = await createProject(ctx());
    });

    const expectLimitedAfterThree = async (send: (ip: string) => Promise<{ statusCode: number; json(): unknown }>, refused: number) => {
      const client = ip();
      for (let i = 0; i < 3; i++) assert.equal((await send(client)).statusCode, refused);
      const res = await send(client);
      assert.equal(res.statusCode, 429);
      // Form answers add code and url to the error object (contract D14).
      const body = res.json() as { error: boolean; message: string };
      assert.equal(body.error, true);
      assert.equal(body.message, 'Too many requests, please try again later.');
    };

    it('limits API key guessing on code references', async () => {
      await expectLimitedAfterThree(
        (remoteAddress) =>
          ctx().app.inject({
            method: 'POST',
            url: '/v1/flags/code-refs',
            headers: { ...keys(project), 'x-api-key': `fpk_guess_${randomBytes(4).toString('hex')}`, 'content-type': 'application/json' },
            payload: '{}',
            remoteAddress,
          }),
        401,
      );
    });

    it('limits requests without key headers', async () => {
      await expectLimitedAfterThree(
        (remoteAddress) =>
          ctx().app.inject({
            method: 'POST',
            url: '/v1/flags/preview/feedback',
            headers: { 'content-type': 'application/json' },
            payload: '{}',
            remoteAddress,
          }),
        400,
      );
    });

    it('limits form key probing', async () => {
      await expectLimitedAfterThree(
        (remoteAddress) =>
          ctx().app.inject({
            method: 'POST',
            url: `/v1/s/${randomBytes(8).toString('hex')}?mode=rest`,
            headers: { 'content-type': 'application/json' },
            payload: '{"a":1}',
            remoteAddress,
          }),
        404,
      );
    });
  },
  { FLAGPOST_RATE_LIMIT_MAX: '3' },
);
