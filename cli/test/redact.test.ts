import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isSecretName, REDACTED, redactSecrets } from '../src/redact.ts';

const R = REDACTED;

describe('secret-looking values in uploaded lines', () => {
  const cases: Array<[string, string, string, string[]?]> = [
    [
      'a Flagpost API key',
      `const key = 'fpa_3kP9xQ2mL7vN8bR4tY6w'; if (flags.isEnabled('new-checkout'))`,
      `const key = '${R}'; if (flags.isEnabled('new-checkout'))`,
    ],
    [
      'a Flagpost access token in a header',
      `curl -H "Authorization: Bearer fpt_Zx81kq0plmNB55aa" /flags/new-checkout`,
      `curl -H "Authorization: Bearer ${R}" /flags/new-checkout`,
    ],
    ['a GitHub token', `token=ghp_aBcD1234eFgH5678iJkL9012mNoP3456qRsT # new-checkout`, `token=${R} # new-checkout`],
    ['an AWS access key id', `aws_id = AKIAIOSFODNN7EXAMPLE // new-checkout`, `aws_id = ${R} // new-checkout`],
    ['a Stripe live key', `stripe("sk_live_51H8abcdefGHIJKLmnop"); isEnabled('pay-v2')`, `stripe("${R}"); isEnabled('pay-v2')`],
    ['a Slack token', `xoxb-1234567890-abcdefghij isEnabled('chat')`, `${R} isEnabled('chat')`],
    ['a private key header', `-----BEGIN RSA PRIVATE KEY----- new-checkout`, R],
    ['an OpenSSH private key header', `-----BEGIN OPENSSH PRIVATE KEY-----`, R],
    ['a .env assignment', `API_KEY=hunter2-and-more # for new-checkout`, `API_KEY=${R} # for new-checkout`],
    ['an exported assignment', `export DB_PASSWORD=correcthorse`, `export DB_PASSWORD=${R}`],
    ['a YAML secret', `  client_secret: s3cr3t-value`, `  client_secret: ${R}`],
    ['a JSON secret', `{"apiKey": "abc123def", "flag": "new-checkout"}`, `{"apiKey": "${R}", "flag": "new-checkout"}`],
    ['a quoted secret in code', `const clientSecret = 'plain words here'; isEnabled('new-checkout')`, `const clientSecret = '${R}'; isEnabled('new-checkout')`],
    ['a long high-entropy string', `fetch(url, { sig: 'Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA9x' }) // new-checkout`, `fetch(url, { sig: '${R}' }) // new-checkout`],
    ['a 40-character hex digest', `const digest = "3f786850e387550fdab836ed7e6dc881de23001b";`, `const digest = "${R}";`],
    ['a JSON web token', `auth_header eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N`, `auth_header ${R}`],
    ['not a flag check', `if (flags.isEnabled('new-checkout')) {`, `if (flags.isEnabled('new-checkout')) {`],
    ['not a key-named variable holding code', `const apiKey = process.env.FLAGPOST_API_KEY;`, `const apiKey = process.env.FLAGPOST_API_KEY;`],
    [
      'not ordinary long words',
      `import { FeatureFlagProviderComponent } from './components/FeatureFlagProvider';`,
      `import { FeatureFlagProviderComponent } from './components/FeatureFlagProvider';`,
    ],
    ['not a UUID', `id: '123e4567-e89b-12d3-a456-426614174000'`, `id: '123e4567-e89b-12d3-a456-426614174000'`],
    ['not a monkey', `const monkey = 'banana-split'; isEnabled('zoo')`, `const monkey = 'banana-split'; isEnabled('zoo')`],
    [
      'not the slug itself under a key-named name',
      `const flagKey = 'checkout-redesign-2024q3v2'`,
      `const flagKey = 'checkout-redesign-2024q3v2'`,
      ['checkout-redesign-2024q3v2'],
    ],
  ];
  for (const [name, line, expected, keep] of cases) {
    it(`redacts ${name}`, () => assert.equal(redactSecrets(line, keep ?? ['new-checkout']), expected));
  }

  it('tells secret names from other identifiers', () => {
    for (const name of ['API_KEY', 'apiKey', 'client-secret', 'token', 'SECRET_KEY_BASE', 'dbPassword', 'x-auth', 'GITHUB_TOKEN', 'privateKey'])
      assert.ok(isSecretName(name), name);
    for (const name of ['keyboard', 'monkey', 'tokenizer', 'keyId', 'authorName', 'flag', 'secretary']) assert.ok(!isSecretName(name), name);
  });
});
