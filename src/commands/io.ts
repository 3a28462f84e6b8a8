/** Where a command writes. Tests pass a capturing implementation. */
export interface CommandIo {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
}

/** The real terminal. */
export const processIo: CommandIo = {
  out: (text) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
  err: (text) => process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
  env: process.env,
  cwd: process.cwd(),
};

/** What a command returns: the exit code (set on process.exitCode by cli.ts). */
export type ExitCode = 0 | 1 | 2;
