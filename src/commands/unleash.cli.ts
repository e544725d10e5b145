import fs from 'node:fs';
import { describePlan, type UnleashImportResult } from '../documents/index.ts';
import { adminCall, CommandError, describeChangeRequests, parseDocument, type RemoteOptions, takeFlag, takeOption } from './project-document.cli.ts';

/**
 * `import unleash <file> [--project <projectKey>] [--name <projectName>] [--environment <name>] [--dry-run]`:
 * sends an Unleash export (JSON) to a running Flagpost and prints what changed and what could not be carried.
 */
export async function importUnleashCommand(args: string[], options: RemoteOptions): Promise<void> {
  const rest = [...args];
  const dryRun = takeFlag(rest, '--dry-run');
  const projectKey = takeOption(rest, '--project');
  const projectName = takeOption(rest, '--name');
  const environment = takeOption(rest, '--environment');
  const [source, file] = rest;
  if (source !== 'unleash' || !file || rest.length > 2) {
    throw new CommandError('import needs "unleash" and a file name, and optionally --project, --name, --environment and --dry-run.', 2);
  }
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new CommandError(`Cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`, 1);
  }
  const body = {
    export: parseDocument(text, file),
    dryRun,
    ...(projectKey ? { projectKey } : {}),
    ...(projectName ? { projectName } : {}),
    ...(environment ? { environment } : {}),
  };
  const result = (await adminCall(options, 'POST', '/admin/v1/imports/unleash', body)) as UnleashImportResult;
  const changes = describePlan(result.changes)
    .map((l) => `  ${l}\n`)
    .join('');
  const skipped = result.notCarried
    .map((n) => `  ${[n.feature, n.environment].filter(Boolean).join(' in ')}${n.feature ? ': ' : ''}${n.item}: ${n.reason}\n`)
    .join('');
  options.out(
    `${dryRun ? 'Dry run: importing' : 'Imported'} ${file} ${dryRun ? 'would make' : 'into project ' + (result.projectKey ?? '(new)') + ':'} ${result.changes.filter((c) => c.action !== 'keep').length} change(s):\n${changes}` +
      describeChangeRequests(result.changeRequests, dryRun, options.url) +
      (skipped === '' ? 'Everything was carried over.\n' : `Not carried over (${result.notCarried.length}):\n${skipped}`),
  );
}
