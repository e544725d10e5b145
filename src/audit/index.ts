export { AuditLog } from './audit.service.ts';
export { AuditStore } from './audit.store.ts';
export { auditAdminRoutes } from './audit.routes.ts';
export { type Actor, type AuditInput, changesOf, type FieldChange, unchanged } from './audit.ts';
