import { AppError, messages } from '../errors.ts';
import { encodeCursor, pageQueryProperties, readPage } from '../http/paging.ts';
import { adminErrors, type RoutePlugin } from '../http/schemas.ts';
import { redactActor, redactChanges } from '../identity/index.ts';
import type { AuditLog } from './audit.service.ts';
import type { AuditEntity } from './audit.ts';

const ENTITIES = [
  'project',
  'environment',
  'flag',
  'segment',
  'change_request',
  'webhook',
  'api_key',
  'form',
  'submission',
  'code_refs',
  'personal_data',
  'member',
  'invitation',
  'access_token',
  'settings',
  'sign_in',
  'metric',
  'experiment',
  'release',
  'release_template',
] as const;
const ACTOR_TYPES = ['admin_token', 'user', 'access_token', 'form_token', 'anonymous', 'system'] as const;
/**
 * Entries about people (e-mail addresses, tokens' names, member settings, sign-ins, the fingerprints of
 * the addresses of access and erasure requests): owners only, as the member routes.
 */
const OWNER_ENTITIES = ['member', 'invitation', 'access_token', 'settings', 'sign_in', 'personal_data'] as const satisfies readonly AuditEntity[];

export const auditQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...pageQueryProperties,
    project: { type: 'string', maxLength: 100, description: 'A project key' },
    entity: { type: 'string', enum: ENTITIES },
    entityId: { type: 'string', maxLength: 200, description: 'With entity: a flag slug, a form key, an id' },
    actor: { type: 'string', maxLength: 100, description: 'A user id' },
    actorType: { type: 'string', enum: ACTOR_TYPES },
    since: { type: 'string', maxLength: 40, description: 'ISO 8601 date-time, inclusive' },
    until: { type: 'string', maxLength: 40, description: 'ISO 8601 date-time, exclusive' },
  },
} as const;

const changeSchema = { type: 'object', additionalProperties: false, properties: { before: {}, after: {} } } as const;

export const auditEntrySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'at', 'actor', 'projectKey', 'entity', 'entityId', 'environmentKey', 'action', 'changes'],
  properties: {
    id: { type: 'string' },
    at: { type: 'string', format: 'date-time' },
    actor: {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'id', 'label'],
      properties: { type: { type: 'string', enum: ACTOR_TYPES }, id: { type: ['string', 'null'] }, label: { type: 'string' } },
    },
    projectKey: { type: ['string', 'null'] },
    entity: { type: 'string', enum: ENTITIES },
    entityId: { type: 'string' },
    environmentKey: { type: ['string', 'null'] },
    action: { type: 'string' },
    changes: { type: 'object', additionalProperties: changeSchema },
  },
} as const;

/** A date-time of the query, in the stored form (ISO 8601 UTC with milliseconds) so that text comparison is time order. */
function readTime(field: 'since' | 'until', text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const time = /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2})?)?$/.test(text) ? Date.parse(text) : NaN;
  if (Number.isNaN(time)) throw AppError.validation([{ field: `querystring.${field}`, reason: 'must be an ISO 8601 date or date-time' }]);
  return new Date(time).toISOString();
}

/** GET /admin/v1/audit: the audit log, newest first; there is no route that changes or deletes an entry. */
export const auditAdminRoutes: RoutePlugin<{ audit: AuditLog }> = async (app, { audit }) => {
  app.get(
    '/audit',
    {
      // A member with roles on single projects reads the entries of those projects only (ADR 0033).
      config: { project: 'listing' },
      schema: {
        summary: 'The audit log, newest first, filtered by project, entity, actor and time range',
        querystring: auditQuery,
        response: {
          200: {
            type: 'object',
            additionalProperties: false,
            required: ['entries', 'nextCursor'],
            properties: { entries: { type: 'array', items: auditEntrySchema }, nextCursor: { type: ['string', 'null'] } },
          },
          ...adminErrors,
        },
      },
    },
    async (request) => {
      const q = request.query;
      if (q.entityId !== undefined && q.entity === undefined) {
        throw AppError.validation([{ field: 'querystring.entityId', reason: 'needs entity' }]);
      }
      const ownerOnly = request.role !== 'owner';
      if (ownerOnly && (OWNER_ENTITIES as readonly string[]).includes(q.entity ?? '')) throw new AppError('forbidden', messages.roleForbidden);
      const since = readTime('since', q.since);
      const until = readTime('until', q.until);
      const page = await audit.list(
        {
          projectKey: q.project,
          entity: q.entity as AuditEntity | undefined,
          entityId: q.entityId,
          actorId: q.actor,
          actorType: q.actorType,
          excludeEntities: ownerOnly ? OWNER_ENTITIES : undefined,
          projectIds: request.projects.all ? undefined : [...request.projects.ids],
          since,
          until,
        },
        readPage(q),
      );
      const role = request.role;
      const entries = page.items.map((e) => ({ ...e, actor: redactActor(role, e.actor), changes: redactChanges(role, e.changes) }));
      return { entries, nextCursor: encodeCursor(page.next) };
    },
  );
};
