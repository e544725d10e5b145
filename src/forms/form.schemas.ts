const nullable = (schema: Record<string, unknown>) => ({ anyOf: [schema, { type: 'null' }] });
const url = { type: 'string', minLength: 1, maxLength: 2000 };
const list = (item: Record<string, unknown>, maxItems: number) => nullable({ type: 'array', items: item, maxItems });

/** Form settings of the admin API; URLs, origins, addresses and e-mails are checked in form.ts. */
const settings = {
  name: { type: 'string', minLength: 1, maxLength: 100 },
  enabled: { type: 'boolean' },
  uploadsEnabled: { type: 'boolean' },
  honeypot: nullable({ type: 'string', maxLength: 100 }),
  websites: list({ type: 'string', maxLength: 500 }, 50),
  blockedIps: list({ type: 'string', maxLength: 64 }, 1000),
  successUrl: nullable(url),
  errorUrl: nullable(url),
  redirectUrl: nullable(url),
  webhookUrl: nullable(url),
  notifyEmails: list({ type: 'string', maxLength: 254 }, 20),
} as const;

export const createFormBody = { type: 'object', required: ['name'], additionalProperties: false, properties: settings } as const;

/** PATCH: an absent field keeps its value, null clears it (contract "Admin API"). */
export const updateFormBody = { type: 'object', additionalProperties: false, properties: settings } as const;
