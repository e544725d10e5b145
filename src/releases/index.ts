export { ExperimentGuardrailData, PrometheusClient } from './guardrail-readers.ts';
export { releaseAdminRoutes } from './release.routes.ts';
export { ReleaseGuard } from './release.guard.ts';
export { ReleaseService } from './release.service.ts';
export { ReleaseStore } from './release.store.ts';
export { ReleaseTemplateService } from './release-template.service.ts';
export { ReleaseRuleGuard } from './release-rule.guard.ts';
export { startReleaseBody } from './release.schemas.ts';
export type { ResolvedPlan } from './release.service.ts';
