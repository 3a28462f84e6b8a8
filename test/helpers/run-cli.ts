/** Spawns the built `cascade` binary (dist/cli.js) the way a user runs it. */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (where package.json and config/ live). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The built CLI entry point. */
export const CLI_PATH = path.join(REPO_ROOT, 'dist', 'cli.js');

/** Throws a clear error when `npm run build` has not been run (call it in beforeAll). */
export function assertBuilt(): void {
  if (!existsSync(CLI_PATH)) {
    throw new Error(`${CLI_PATH} is missing: run \`npm run build\` before the e2e tests`);
  }
}

/** How to run the CLI. */
export interface RunCliOptions {
  /**
   * Variables over the inherited environment. `undefined` removes a variable. CONFIG_PATH is
   * removed from the inherited environment so a developer's shell cannot leak into a test.
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Start from an empty environment (plus PATH) instead of this process's. */
  readonly cleanEnv?: boolean;
  /** Working directory; default the repository root. */
  readonly cwd?: string;
  /** Written to stdin, which is then closed. */
  readonly input?: string;
  /** Kill the process after this long (ms): a hang guard, sized for a busy machine. Default 30 s. */
  readonly timeoutMs?: number;
}

/** What the process did. */
export interface CliResult {
  /** Exit code; null when killed by a signal. */
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

function buildEnv(options: RunCliOptions): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = options.cleanEnv
    ? { PATH: process.env.PATH }
    : { ...process.env, CONFIG_PATH: undefined };
  const env: NodeJS.ProcessEnv = { ...base, NO_COLOR: '1', FORCE_COLOR: '0', ...options.env };
  for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key];
  return env;
}

/** Runs `node dist/cli.js ...args` and resolves when it exits. */
export function runCli(args: readonly string[], options: RunCliOptions = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_PATH, ...args], {
      cwd: options.cwd ?? REPO_ROOT,
      env: buildEnv(options),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}
