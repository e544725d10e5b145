import { AppError, messages } from '../errors.ts';
import type { Role } from '../identity/index.ts';
import { message } from '../errors.ts';
import type { Environment, Project } from './project.ts';

/** The query of a direct write that may bypass a protected environment (issue 24). */
export const protectionQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    bypassProtection: {
      type: 'string',
      enum: ['true', 'false'],
      description: 'Owners only: write to a protected environment directly, in an emergency; the audit entry records it (protectionBypassed)',
    },
  },
} as const;

/** True when the request asks to bypass protection; only owners may (403 otherwise). */
export function bypassRequested(query: { bypassProtection?: 'true' | 'false' }, role: Role): boolean {
  if (query.bypassProtection !== 'true') return false;
  if (role !== 'owner') throw new AppError('forbidden', messages.roleForbidden);
  return true;
}

/** What a direct write may ask for. */
export interface WriteOptions {
  /** An owner's emergency write to a protected environment (the route checks the role); recorded in the audit entry. */
  bypassProtection?: boolean;
}

/** A direct write to a protected environment is refused with a pointer to change requests (issue 24). */
export function checkWritable(environment: Environment, projectKey: string, options: WriteOptions): void {
  if (environment.protected && !options.bypassProtection) {
    throw new AppError('conflict', message('environmentProtected', { environment: environment.name, projectKey }));
  }
}

/** Segments serve every environment of their project: a change is refused while one is protected. */
export function checkSegmentsWritable(project: Project, options: WriteOptions): void {
  if (project.environments.some((e) => e.protected) && !options.bypassProtection) {
    throw new AppError('conflict', message('projectProtected', { projectKey: project.key }));
  }
}

/** The audit field of a write that bypassed a protection, if it did. */
export const bypassNote = (bypassed: boolean | undefined): Record<string, { after: true }> => (bypassed ? { protectionBypassed: { after: true } } : {});
