import { spawn, type ChildProcess } from 'node:child_process';
import { CLI_PATH, REPO_ROOT } from '../helpers/run-cli.js';

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
