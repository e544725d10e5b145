export { projectAdminRoutes } from './project.routes.ts';
export { ProjectService } from './project.service.ts';
export { ProjectStore } from './project.store.ts';
export { approvalsNeeded, type Environment, type Project } from './project.ts';
export { environmentParams, environmentSchema, nameBody, projectParams, projectSchema } from './project.schemas.ts';
export { bypassNote, bypassRequested, checkSegmentsWritable, checkWritable, protectionQuery, type WriteOptions } from './protection.ts';
