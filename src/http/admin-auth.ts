import type { FastifyRequest } from 'fastify';
import { AppError, messages } from '../errors.ts';

/** What the admin scope needs to know about a presented token. */
export interface AdminCredentials {
  verify(token: string): boolean;
}

/** onRequest hook for the admin scope: `Authorization: Bearer <admin token>` or 401 JSON. */
export function adminAuth(credentials: AdminCredentials) {
  return async (request: FastifyRequest): Promise<void> => {
    const header = request.headers.authorization ?? '';
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match || !credentials.verify(match[1]!)) throw new AppError('unauthorized', messages.adminUnauthorized);
  };
}
