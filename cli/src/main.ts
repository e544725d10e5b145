import fs from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { codeRefs, type Io } from './code-refs.ts';
import { DEFAULT_LIMITS, type FlagValues, loadConfig } from './config.ts';
import { CliError, ExitCode } from './errors.ts';

export type { Io } from './code-refs.ts';

/** This package's version (package.json is one folder up from both src/ and dist/). */
export function version(): string {
  const pkg = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

function program(io: Io, run: (flags: FlagValues) => Promise<void>): Command {
  const root = new Command('flagpost')
    .description("Flagpost's command line for CI: finds where feature flags are used and uploads the references")
    .version(version(), '-V, --version')
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .showHelpAfterError('(flagpost code-refs --help lists the options)');

  const limit = (flag: string, what: string, fallback: number) => new Option(flag, `${what} (default ${fallback})`);
  root
    .command('code-refs')
    .description(
      'Scan a source tree for the slugs of an environment and upload where they are used (the complete set for the branch). ' +
        'Settings come from .flagsrc, .flagpostrc.json, FLAGPOST_* variables and these options, each overriding the one before ' +
        '(the API URL only from an option or FLAGPOST_API_URL).',
    )
    .option('--api-url <url>', 'base of the flag interface, e.g. http://localhost:3000/v1 (FLAGPOST_API_URL)')
    .option('--project-key <key>', 'project key (FLAGPOST_PROJECT_KEY)')
    .option('--environment-key <key>', 'environment key (FLAGPOST_ENVIRONMENT_KEY)')
    .option('--api-key <token>', 'project API key, not needed with --dry-run (FLAGPOST_API_KEY)')
    .option('--dir <path>', 'directory to scan (default: the working directory; FLAGPOST_SCAN_DIR)')
    .option('--branch <name>', 'branch (default: detected from GitHub Actions, GitLab CI or git)')
    .option('--repository-url <url>', 'repository web address (default: detected)')
    .option('--project-name <name>', 'project (repository) name (default: detected)')
    .option('--dry-run', 'print the JSON body instead of uploading it')
    .option('--scan-env-files', 'scan .env* files too, which are skipped by default (secret-looking values are redacted in any case)')
    .option('--fail-on <list>', 'exit 1 when code references an expired flag or an unknown slug: expired,unknown')
    .addOption(limit('--max-files <n>', 'stop with an error past this many files', DEFAULT_LIMITS.maxFiles))
    .addOption(limit('--max-references <n>', 'stop with an error past this many references', DEFAULT_LIMITS.maxReferences))
    .addOption(limit('--max-file-bytes <n>', 'skip files larger than this', DEFAULT_LIMITS.maxFileBytes))
    .addOption(limit('--max-line-length <n>', 'shorten stored lines to this many characters, 20 to 4000', DEFAULT_LIMITS.maxLineLength))
    .addOption(limit('--max-upload-bytes <n>', 'upload nothing when the body is larger than this', DEFAULT_LIMITS.maxUploadBytes))
    .option('--config <file>', 'the scanner configuration file (default: .flagpostrc.json if present; FLAGPOST_SCAN_CONFIG)')
    .action(async (flags: FlagValues) => run(flags));
  return root;
}

/** Runs the command line; answers the exit code (errors are written to io.stderr, never thrown). */
export async function main(argv: readonly string[], io: Io): Promise<number> {
  let exitCode: number = ExitCode.ok;
  const cli = program(io, async (flags) => {
    const config = loadConfig({ cwd: io.cwd, env: io.env, flags });
    exitCode = await codeRefs(config, io);
  });
  try {
    await cli.parseAsync([...argv], { from: 'user' });
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
    if (error instanceof CliError) {
      io.stderr(`flagpost: ${error.message}\n`);
      return error.exitCode;
    }
    io.stderr(`flagpost: unexpected error (please report it): ${(error as Error)?.stack ?? String(error)}\n`);
    return ExitCode.unexpected;
  }
}
