import { adminErrors, isoTimestamp, noContent, type RoutePlugin } from '../http/schemas.ts';
import { formReadTokenView } from './read-token.ts';
import type { FormReadTokenService } from './read-token.service.ts';

const formKeyParams = { type: 'object', required: ['formKey'], properties: { formKey: { type: 'string' } } } as const;
const tokenParams = {
  type: 'object',
  required: ['formKey', 'tokenId'],
  properties: { formKey: { type: 'string' }, tokenId: { type: 'string', maxLength: 100 } },
} as const;

const readTokenSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'tokenPrefix', 'createdAt', 'lastUsedAt'],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    tokenPrefix: { type: 'string', description: 'The first characters of the token, to tell tokens apart' },
    createdAt: isoTimestamp,
    lastUsedAt: { type: ['string', 'null'], description: 'Within a minute' },
    token: { type: 'string', description: 'Shown once, on creation: `Authorization: Bearer <token>`' },
  },
} as const;

/**
 * A form's read-only tokens for integrations (issue 34): editors and owners make, list and delete them.
 * A token reads its form's submissions (list, one, exports) and nothing else (identity/admin-gate.ts).
 */
export const formReadTokenRoutes: RoutePlugin<{ readTokens: FormReadTokenService }> = async (app, { readTokens }) => {
  app.post(
    '/forms/:formKey/read-tokens',
    {
      config: { access: 'editor' },
      schema: {
        summary: "Make a read-only token for an integration: it reads this form's submissions and nothing else (the secret is shown once)",
        params: formKeyParams,
        body: { type: 'object', additionalProperties: false, required: ['name'], properties: { name: { type: 'string', minLength: 1, maxLength: 100 } } },
        response: { 201: readTokenSchema, ...adminErrors },
      },
    },
    async (request, reply) => {
      const { readToken, token } = await readTokens.create(request.params.formKey, request.body.name.trim(), request.actor);
      return reply
        .code(201)
        .header('cache-control', 'no-store')
        .send({ ...formReadTokenView(readToken), token });
    },
  );

  app.get(
    '/forms/:formKey/read-tokens',
    {
      config: { access: 'editor' },
      schema: {
        summary: "The form's read-only tokens (never their secrets)",
        params: formKeyParams,
        response: {
          200: { type: 'object', additionalProperties: false, required: ['readTokens'], properties: { readTokens: { type: 'array', items: readTokenSchema } } },
          ...adminErrors,
        },
      },
    },
    async (request) => ({ readTokens: (await readTokens.list(request.params.formKey)).map(formReadTokenView) }),
  );

  app.delete(
    '/forms/:formKey/read-tokens/:tokenId',
    {
      config: { access: 'editor' },
      schema: {
        summary: 'Delete a read-only token: it is refused from the next request on',
        params: tokenParams,
        response: { 204: noContent, ...adminErrors },
      },
    },
    async (request, reply) => {
      await readTokens.revoke(request.params.formKey, request.params.tokenId, request.actor);
      return reply.code(204).send();
    },
  );
};
