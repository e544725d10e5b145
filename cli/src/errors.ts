/**
 * Exit codes of `flagpost code-refs` (documented in cli/README.md):
 * 0 done; 1 a `--fail-on` condition matched (after the upload); 2 usage or configuration error;
 * 3 Flagpost answered with an error or could not be reached; 4 a cap (files, references) or the upload
 * size was exceeded, so nothing was uploaded; 5 an unexpected error (a bug of the scanner).
 */
export const ExitCode = {
  ok: 0,
  failOn: 1,
  usage: 2,
  server: 3,
  limit: 4,
  unexpected: 5,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** An error that ends the command with a message for the user and an exit code, not a stack trace. */
export class CliError extends Error {
  constructor(
    readonly exitCode: ExitCodeValue,
    message: string,
  ) {
    super(message);
    this.name = 'CliError';
  }
}
