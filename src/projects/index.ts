export { projectAdminRoutes } from './project.routes.ts';
export { ProjectService } from './project.service.ts';
export { ProjectStore } from './project.store.ts';
export type { Environment, Project } from './project.ts';
export { environmentSchema, nameBody, projectParams, projectSchema } from './project.schemas.ts';
