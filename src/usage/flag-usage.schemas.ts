/** `?days=` of the usage answers: whole days up to today, 1 to 366 (the retention period bounds what is there). */
export const usageQuery = {
  type: 'object',
  properties: { days: { type: 'string', pattern: '^[0-9]{1,3}$', description: 'Days up to today (UTC) to cover, 1 to 366; 30 when absent' } },
} as const;

export const flagUsageSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['slug', 'days', 'environments'],
  properties: {
    slug: { type: 'string' },
    days: { type: 'array', items: { type: 'string' }, description: 'The UTC days covered (YYYY-MM-DD), oldest first' },
    environments: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['key', 'name', 'lastEvaluatedAt', 'evaluations'],
        properties: {
          key: { type: 'string' },
          name: { type: 'string' },
          lastEvaluatedAt: { type: ['string', 'null'] },
          evaluations: { type: 'array', items: { type: 'integer' }, description: 'Evaluations per day, in the order of `days`' },
        },
      },
    },
  },
} as const;

export const projectUsageSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['days', 'flags'],
  properties: {
    days: { type: 'integer' },
    flags: {
      type: 'array',
      description: 'Every flag of the project, most evaluated first',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['slug', 'evaluations', 'lastEvaluatedAt', 'environments'],
        properties: {
          slug: { type: 'string' },
          evaluations: { type: 'integer' },
          lastEvaluatedAt: { type: ['string', 'null'] },
          environments: {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['key', 'evaluations'],
              properties: { key: { type: 'string' }, evaluations: { type: 'integer' } },
            },
          },
        },
      },
    },
  },
} as const;
