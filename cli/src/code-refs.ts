import { fetchFlags, type Fetch, uploadReferences } from './api.ts';
import type { Config } from './config.ts';
import { type Env, type GitRunner, resolveContext } from './context.ts';
import { CliError, ExitCode } from './errors.ts';
import { Matcher } from './matcher.ts';
import { type Reference, scan, type ScanStats } from './scan.ts';
import { SKIP_LABELS, type SkipReason } from './walk.ts';

/** What the command reads and writes besides the file system; tests pass their own. */
export interface Io {
  env: Env;
  cwd: string;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  fetch?: Fetch;
  now?: () => Date;
  git?: GitRunner;
}

export interface UploadBody {
  branch: string;
  projectName: string;
  repositoryUrl?: string;
  references: Record<string, Reference[]>;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function places(list: readonly Reference[], total = list.length): string {
  const shown = list.slice(0, 5).map((r) => `${r.filePath}:${r.lineNumber}`);
  return shown.join(', ') + (total > shown.length ? `, and ${total - shown.length} more` : '');
}

export function summaryLine(stats: ScanStats, flagsReferenced: number, flagsKnown: number, unknownSlugs: number): string {
  const skipped = (Object.entries(stats.skipped) as Array<[SkipReason, number]>).filter(([, n]) => n > 0);
  const skippedTotal = skipped.reduce((sum, [, n]) => sum + n, 0);
  const details = [
    skippedTotal > 0 ? `skipped ${skippedTotal}: ${skipped.map(([reason, n]) => `${n} ${SKIP_LABELS[reason]}`).join(', ')}` : 'skipped 0',
    `${plural(stats.ignored, 'path')} ignored`,
    ...(stats.unreadableDirs > 0 ? [`${plural(stats.unreadableDirs, 'unreadable folder')}`] : []),
  ];
  return (
    `Scanned ${plural(stats.scanned, 'file')} (${details.join('; ')}); ` +
    `${flagsReferenced} of ${plural(flagsKnown, 'flag')} referenced, ${plural(stats.references, 'reference')}` +
    (unknownSlugs > 0 ? `; ${plural(unknownSlugs, 'unknown slug')}` : '')
  );
}

/** `flagpost code-refs`: fetch the slugs, scan, upload (or print), report; answers the exit code. */
export async function codeRefs(config: Config, io: Io): Promise<number> {
  const log = (line: string) => io.stderr(`flagpost: ${line}\n`);
  const now = (io.now ?? (() => new Date()))();
  for (const notice of config.notices) log(notice);

  const context = resolveContext({
    given: { branch: config.branch, projectName: config.projectName, repositoryUrl: config.repositoryUrl },
    env: io.env,
    dir: config.dir,
    ...(io.git ? { git: io.git } : {}),
  });
  for (const warning of context.warnings) log(warning);

  const flags = await fetchFlags(config, io.fetch);
  const matcher = new Matcher(
    flags.map((f) => f.slug),
    config.aliases,
  );
  const result = scan(matcher, { dir: config.dir, ignore: config.ignore, limits: config.limits, scanEnvFiles: config.scanEnvFiles });

  const slugs = [...result.references.keys()].sort();
  const body: UploadBody = {
    branch: context.branch,
    projectName: context.projectName,
    ...(context.repositoryUrl !== undefined ? { repositoryUrl: context.repositoryUrl } : {}),
    references: Object.fromEntries(slugs.map((slug) => [slug, result.references.get(slug)!])),
  };
  const serialized = JSON.stringify(body);
  const size = Buffer.byteLength(serialized);

  log(summaryLine(result.stats, slugs.length, flags.length, result.unknown.size));
  log(
    `Branch ${JSON.stringify(context.branch)} (${context.sources.branch}), project ${JSON.stringify(context.projectName)} (${context.sources.projectName})` +
      (context.repositoryUrl ? `, repository ${context.repositoryUrl}` : ''),
  );

  const unknownSlugs = [...result.unknown.keys()].sort();
  for (const slug of unknownSlugs) {
    log(`Unknown slug ${JSON.stringify(slug)} (no flag of this environment), not uploaded: ${places(result.unknown.get(slug)!)}`);
  }
  const expired = flags.filter((f) => f.expiredAt !== null && Date.parse(f.expiredAt) <= now.getTime() && result.references.has(f.slug));
  for (const flag of expired) {
    log(`Flag ${JSON.stringify(flag.slug)} expired at ${flag.expiredAt} and is still referenced: ${places(result.references.get(flag.slug)!)}`);
  }

  if (config.dryRun) io.stdout(`${JSON.stringify(body, null, 2)}\n`);

  if (size > config.limits.maxUploadBytes) {
    throw new CliError(
      ExitCode.limit,
      `The upload would be ${size} bytes, over the --max-upload-bytes limit of ${config.limits.maxUploadBytes}. Nothing was ${config.dryRun ? 'sent (dry run)' : 'uploaded'}: ` +
        `Flagpost replaces the references of (projectName, branch) all or nothing, so the upload cannot be split. ` +
        `Lower --max-line-length (now ${config.limits.maxLineLength}), leave files out with .flagpostignore or "ignore" in .flagpostrc.json, ` +
        `or raise the server's FLAGPOST_BODY_LIMIT_BYTES and --max-upload-bytes with it.`,
    );
  }

  if (config.dryRun) {
    log(`Dry run: nothing was sent (the body above is ${size} bytes)`);
  } else {
    const message = await uploadReferences({ ...config, apiKey: config.apiKey! }, serialized, io.fetch);
    log(`Uploaded ${plural(result.stats.references, 'reference')} of ${plural(slugs.length, 'flag')} (${size} bytes): ${message}`);
  }

  const failures: string[] = [];
  if (config.failOn.includes('expired') && expired.length > 0) {
    failures.push(
      `--fail-on expired: ${plural(expired.length, 'expired flag is', 'expired flags are')} still referenced (${expired.map((f) => f.slug).join(', ')})`,
    );
  }
  if (config.failOn.includes('unknown') && unknownSlugs.length > 0) {
    failures.push(`--fail-on unknown: ${plural(unknownSlugs.length, 'unknown slug is', 'unknown slugs are')} used (${unknownSlugs.join(', ')})`);
  }
  for (const failure of failures) log(failure);
  return failures.length > 0 ? ExitCode.failOn : ExitCode.ok;
}
