/** Querystring of the admin listing and export of a form's submissions. */
export const submissionListQuery = {
  type: 'object',
  properties: {
    cursor: { type: 'string' },
    limit: { type: 'string' },
    spam: { type: 'string', enum: ['true', 'false', 'all'] },
  },
} as const;
