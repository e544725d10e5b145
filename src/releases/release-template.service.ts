import type { Actor, AuditLog } from '../audit/index.ts';
import { newId } from '../db/codec.ts';
import type { Db } from '../db/database.ts';
import { AppError, message } from '../errors.ts';
import type { ProjectService } from '../projects/index.ts';
import { type Guardrail, planProblems, type ReleaseStep } from './release.ts';
import type { ReleaseService } from './release.service.ts';
import type { ReleaseStore, ReleaseTemplate } from './release.store.ts';

export interface ReleaseTemplateServiceDeps {
  db: Db;
  store: ReleaseStore;
  projects: ProjectService;
  releases: Pick<ReleaseService, 'checkGuardrails'>;
  audit: Pick<AuditLog, 'record'>;
  clock: () => Date;
}

/** Release templates of a project (issue 33): steps and guardrails a release may name and override. */
export class ReleaseTemplateService {
  constructor(private readonly deps: ReleaseTemplateServiceDeps) {}

  /** Step problems as a plan of two made-up variants would have them (the variants are the release's). */
  private check(steps: ReleaseStep[], guardrails: Guardrail[]): void {
    const problems = planProblems({ variant: 'v', baseline: 'b', steps, guardrails }, ['v', 'b']);
    if (problems.length > 0) {
      throw AppError.validation(
        problems.map((p) => {
          const at = p.indexOf(': ');
          return { field: `body.${p.slice(0, at)}`, reason: p.slice(at + 2) };
        }),
      );
    }
  }

  async create(projectKey: string, values: { key: string; name: string; steps: ReleaseStep[]; guardrails?: Guardrail[] }, actor: Actor) {
    const project = await this.deps.projects.getProject(projectKey);
    const guardrails = values.guardrails ?? [];
    this.check(values.steps, guardrails);
    await this.deps.releases.checkGuardrails(project, guardrails);
    const now = this.deps.clock().toISOString();
    const template: ReleaseTemplate = {
      id: newId(),
      projectId: project.id,
      key: values.key,
      name: values.name,
      steps: values.steps,
      guardrails,
      createdAt: now,
      updatedAt: now,
    };
    await this.deps.db.transaction().execute(async (trx) => {
      await this.deps.store.insertTemplate(trx, template, projectKey);
      await this.deps.audit.record(trx, actor, {
        projectId: project.id,
        entity: 'release_template',
        entityId: template.key,
        action: 'release_template.created',
        changes: { name: { after: template.name }, steps: { after: template.steps }, guardrails: { after: template.guardrails } },
      });
    });
    return template;
  }

  async list(projectKey: string): Promise<ReleaseTemplate[]> {
    const project = await this.deps.projects.getProject(projectKey);
    return this.deps.store.listTemplates(this.deps.db, project.id);
  }

  async get(projectKey: string, templateKey: string): Promise<ReleaseTemplate> {
    const project = await this.deps.projects.getProject(projectKey);
    const template = await this.deps.store.findTemplate(this.deps.db, project.id, templateKey);
    if (!template) throw new AppError('not_found', message('releaseTemplateNotFound', { templateKey, projectKey }));
    return template;
  }

  async update(projectKey: string, templateKey: string, values: { name?: string; steps?: ReleaseStep[]; guardrails?: Guardrail[] }, actor: Actor) {
    const project = await this.deps.projects.getProject(projectKey);
    const before = await this.get(projectKey, templateKey);
    const next: ReleaseTemplate = { ...before, ...values, updatedAt: this.deps.clock().toISOString() };
    this.check(next.steps, next.guardrails);
    await this.deps.releases.checkGuardrails(project, next.guardrails);
    await this.deps.db.transaction().execute(async (trx) => {
      await this.deps.store.updateTemplate(trx, next);
      await this.deps.audit.record(trx, actor, {
        projectId: project.id,
        entity: 'release_template',
        entityId: templateKey,
        action: 'release_template.updated',
        changes: Object.fromEntries(
          Object.keys(values).map((k) => [k, { before: before[k as keyof ReleaseTemplate], after: next[k as keyof ReleaseTemplate] }]),
        ),
      });
    });
    return next;
  }

  async delete(projectKey: string, templateKey: string, actor: Actor): Promise<void> {
    const project = await this.deps.projects.getProject(projectKey);
    const template = await this.get(projectKey, templateKey);
    await this.deps.db.transaction().execute(async (trx) => {
      await this.deps.store.deleteTemplate(trx, template.id);
      await this.deps.audit.record(trx, actor, {
        projectId: project.id,
        entity: 'release_template',
        entityId: templateKey,
        action: 'release_template.deleted',
        changes: {},
      });
    });
  }
}
