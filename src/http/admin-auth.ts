import type { FastifyRequest } from 'fastify';
import type { AdminTokenService } from '../admin/admin-token.service.ts';
import { AppError, messages } from '../errors.ts';

/** onRequest hook for the admin scope: `Authorization: Bearer <admin token>` or 401 JSON. */
export function adminAuth(tokens: AdminTokenService) {
  return async (request: FastifyRequest): Promise<void> => {
    const header = request.headers.authorization ?? '';
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match || !tokens.verify(match[1]!)) throw new AppError('unauthorized', messages.adminUnauthorized);
  };
}
