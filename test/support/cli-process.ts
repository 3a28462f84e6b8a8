/**
 * The built `cascade` binary (dist/cli.js) run the way a user runs it: `runCli` for a command
 * that exits (output and exit code), `startCli` for a long-running one (serve, mock-nodes)
 * that a test talks to and then stops.
 */
import { spawn, type ChildProcess } from 'node:child_process';
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

/** A long-running `cascade` process (serve, mock-nodes) started as a user would. */
export interface CliProcess {
  readonly child: ChildProcess;
  /** Everything printed so far. */
  output(): string;
  /** Resolves with the first stdout/stderr line matching `pattern` (rejects after `timeoutMs`, default 30 s). */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** Resolves with the exit code when the process ends by itself. */
  exited(): Promise<number | null>;
}

/** Every child still running; killed if the test process exits first (no orphans). */
const living = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of living) child.kill('SIGKILL');
});

/** How to start the CLI. */
export interface StartCliOptions {
  readonly cwd?: string;
  readonly env?: Record<string, string | undefined>;
  /**
   * The command line before `args`; default `node dist/cli.js` with this process's node.
   * Another Node binary, or a wrapper such as `unshare --pid --fork`, goes here.
   */
  readonly launcher?: readonly string[];
}

/** Spawns `node dist/cli.js ...args` (or `launcher ...args`). */
export function startCli(args: readonly string[], options: StartCliOptions = {}): CliProcess {
  const [command, ...prefix] = options.launcher ?? [process.execPath, CLI_PATH];
  const child = spawn(command!, [...prefix, ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env: { ...process.env, CONFIG_PATH: undefined, LOG_LEVEL: 'info', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer): void => {
    text += chunk.toString();
    for (const listener of listeners) listener();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  living.add(child);
  const exit = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      living.delete(child);
      resolve(code);
    }),
  );
  return {
    child,
    output: () => text,
    waitFor(pattern, timeoutMs = 90_000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          const line = text.split('\n').find((l) => pattern.test(l));
          if (line === undefined) return;
          cleanup();
          resolve(line);
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`timed out waiting for ${pattern}; output so far:\n${text}`));
        }, timeoutMs);
        const cleanup = (): void => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        void exit.then(() => {
          if (listeners.has(check)) {
            cleanup();
            reject(new Error(`process exited before ${pattern}; output:\n${text}`));
          }
        });
        check();
      });
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exit;
    },
    exited: () => exit,
  };
}
