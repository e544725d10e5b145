import type { Actor } from '../audit/index.ts';
import { AppError, message } from '../errors.ts';
import type { DocumentFlag, DocumentFlagEnvironment, ProjectDocument } from './project-document.ts';
import type { ApplyResult, ProjectDocumentService } from './project-document.service.ts';
import { readUnleash, UnleashFormatError } from './unleash-format.ts';
import { type NotCarried, translateUnleash } from './unleash-import.ts';

export interface UnleashImportOptions {
  /** Import into this project (its other flags are kept); without it, into a new project. */
  projectKey?: string;
  /** The name of a new project (default "Unleash import"). */
  projectName?: string;
  /** The environment of a client state, or of an export that names none (default "production"). */
  environment?: string;
  dryRun?: boolean;
}

export interface UnleashImportResult extends ApplyResult {
  notCarried: NotCarried[];
}

/**
 * Migration from Unleash (issue 21, docs/adr/0039): an Unleash export read (unleash-format.ts),
 * translated (unleash-import.ts) and written as flags as code does, in one transaction through
 * ProjectDocumentService: into a new project, or merged into an existing one (its flags and segments
 * that the export does not name are kept, and its environments).
 */
export class UnleashImportService {
  constructor(private readonly deps: { documents: ProjectDocumentService }) {}

  async importUnleash(input: unknown, options: UnleashImportOptions, actor: Actor): Promise<UnleashImportResult> {
    let translation;
    try {
      translation = translateUnleash(readUnleash(input, options.environment ?? 'production'));
    } catch (error) {
      if (!(error instanceof UnleashFormatError)) throw error;
      const field = ['body.export', ...error.path.split('/').filter(Boolean)].join('.');
      throw new AppError('validation', message('unleashInvalid', { path: error.path || '/', reason: error.message }), {
        details: [{ field, reason: error.message }],
      });
    }
    const imported: ProjectDocument = {
      version: 1,
      project: options.projectName ?? 'Unleash import',
      environments: translation.environments,
      segments: translation.segments,
      flags: translation.flags,
    };
    const document = options.projectKey === undefined ? imported : merge(await this.deps.documents.exportProject(options.projectKey), imported);
    const result = await this.deps.documents.apply(
      document,
      options.projectKey === undefined ? { newProject: true, dryRun: options.dryRun } : { projectKey: options.projectKey, dryRun: options.dryRun },
      actor,
    );
    return { ...result, notCarried: translation.notCarried };
  }
}

/** The flag switched off, with its variants: what it is in an environment the export does not configure. */
function switchedOff(type: DocumentFlag['type'], sample: DocumentFlagEnvironment): DocumentFlagEnvironment {
  return type === 'boolean'
    ? { variants: { on: true, off: false }, defaultVariant: 'off' }
    : { state: 'DISABLED', variants: sample.variants, defaultVariant: null };
}

/** The project's document with the import laid over it: imported flags replace their environments, new environments are added. */
function merge(current: ProjectDocument, imported: ProjectDocument): ProjectDocument {
  const environments = [...current.environments, ...imported.environments.filter((e) => !current.environments.includes(e))];
  const flags = Object.create(null) as Record<string, DocumentFlag>;
  for (const [slug, flag] of Object.entries(current.flags)) {
    const sample = Object.values(flag.environments)[0]!;
    flags[slug] = { type: flag.type, environments: Object.fromEntries(environments.map((e) => [e, flag.environments[e] ?? switchedOff(flag.type, sample)])) };
  }
  for (const [slug, flag] of Object.entries(imported.flags)) {
    const existing = flags[slug];
    const sample = Object.values(flag.environments)[0]!;
    flags[slug] = {
      type: flag.type,
      environments: Object.fromEntries(environments.map((e) => [e, flag.environments[e] ?? existing?.environments[e] ?? switchedOff(flag.type, sample)])),
    };
  }
  return { ...current, environments, segments: { ...current.segments, ...imported.segments }, flags };
}
