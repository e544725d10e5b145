import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bodyOf } from './webhook-messages.ts';
import { payloadOf, webhookEventOf } from './webhook.ts';

describe('webhookEventOf: which audit entries are webhook events', () => {
  const rows: Array<[string, string, Record<string, object>, string | undefined]> = [
    ['flag', 'flag.created', {}, 'flag.created'],
    ['flag', 'flag.updated', {}, 'flag.updated'],
    ['flag', 'flag.deleted', {}, 'flag.deleted'],
    ['change_request', 'change_request.created', {}, 'change_request.opened'],
    ['change_request', 'change_request.approved', {}, 'change_request.approved'],
    ['change_request', 'change_request.applied', {}, 'change_request.applied'],
    ['change_request', 'change_request.applied', { scheduledAt: { after: '2026-01-01T00:00:00.000Z' } }, 'scheduled_change.applied'],
    ['change_request', 'change_request.submitted', {}, undefined],
    ['change_request', 'change_request.scheduled', {}, undefined],
    ['segment', 'segment.updated', {}, undefined],
    ['webhook', 'webhook.created', {}, undefined],
  ];
  for (const [entity, action, changes, event] of rows) {
    it(`${action}${Object.keys(changes).length ? ' with scheduledAt' : ''} -> ${event ?? 'none'}`, () => {
      assert.equal(webhookEventOf({ entity, action, changes }), event);
    });
  }
});

describe('bodyOf: presets render the chat service message', () => {
  const payload = payloadOf(
    'flag.updated',
    {
      id: 'a1',
      at: '2026-11-24T10:00:00.000Z',
      actor: { type: 'user', id: 'u1', label: 'ada@example.com' },
      projectId: 'p1',
      entity: 'flag',
      entityId: 'new-checkout',
      environmentKey: 'production',
      action: 'flag.updated',
      changes: { enabled: { before: false, after: true }, description: { before: '<b>', after: '@everyone' } },
    },
    'shop',
    (c) => c,
  );
  const title = 'Flag updated: new-checkout in shop/production by ada@example.com';

  it('sends the payload itself without a preset', () => {
    assert.deepEqual(JSON.parse(bodyOf(null, payload)), payload);
  });
  it('slack: a title section and escaped fields', () => {
    const body = JSON.parse(bodyOf('slack', payload));
    assert.equal(body.text, title);
    assert.equal(body.blocks[1].fields[1].text, '*description*\n&lt;b&gt; → @everyone');
  });
  it('teams: an Adaptive Card with a fact per changed field', () => {
    const card = JSON.parse(bodyOf('teams', payload)).attachments[0];
    assert.equal(card.contentType, 'application/vnd.microsoft.card.adaptive');
    assert.equal(card.content.body[0].text, title);
    assert.deepEqual(card.content.body[1].facts[0], { title: 'enabled', value: 'false → true' });
  });
  it('discord: one embed that mentions nobody', () => {
    const body = JSON.parse(bodyOf('discord', payload));
    assert.deepEqual(body.allowed_mentions, { parse: [] });
    assert.equal(body.embeds[0].title, title);
    assert.deepEqual(body.embeds[0].fields[1], { name: 'description', value: '<b> → @everyone' });
  });
});
