/**
 * Mock nodes in a child process of their own (mock-child.ts), for the benches: `cascade bench
 * load|overhead` and the regression harnesses under benchmarks/. The child inherits this
 * process's CPU affinity, and its CPU time can be read apart from the proxy's and the load
 * generator's. `close()` never throws.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { StartupError } from '../core/errors.js';
import type { MockChildMessage, MockChildRequest } from './mock-child.js';
import type { MockBehaviour, MockNodeOptions } from './types.js';

const MOCK_CHILD_PATH = fileURLToPath(new URL('./mock-child.js', import.meta.url));

/** A running mock-node child. */
export interface MockProcess {
  readonly pid: number;
  readonly nodes: ReadonlyArray<{ name: string; url: string }>;
  /** CPU time the child has used so far, µs. */
  cpuMicros(): Promise<number>;
  /** Applies `behaviour` to every node; resolves once applied. */
  setBehaviour(behaviour: Partial<MockBehaviour>): Promise<void>;
  close(): Promise<void>;
}

/** How to stop a child: `signal` first, SIGKILL when it is still running after `graceMs`. */
export interface StopOptions {
  readonly signal?: NodeJS.Signals;
  readonly graceMs?: number;
}

/** Stops `child` (SIGTERM, then SIGKILL after 5 s by default); resolves once it has exited. */
export function stopChild(child: ChildProcess, options: StopOptions = {}): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), options.graceMs ?? 5_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill(options.signal ?? 'SIGTERM');
  });
}

type Reply<T extends MockChildMessage['type']> = Extract<MockChildMessage, { type: T }>;

/** The child's next message of `type`; rejects when it reports a failure or exits first. */
function next<T extends MockChildMessage['type']>(child: ChildProcess, type: T): Promise<Reply<T>> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: MockChildMessage) => {
      if (message.type === 'failed')
        finish(new StartupError(`bench mock nodes: ${message.message}`));
      else if (message.type === type) finish(undefined, message as Reply<T>);
    };
    const onExit = (code: number | null) =>
      finish(new StartupError(`bench mock-node process exited (${code})`));
    function finish(err?: Error, message?: Reply<T>) {
      child.off('message', onMessage);
      child.off('exit', onExit);
      if (err) reject(err);
      else resolve(message!);
    }
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

/** Forks the mock-node child and waits for its nodes' URLs. */
export async function startMockProcess(options: readonly MockNodeOptions[]): Promise<MockProcess> {
  const child = fork(MOCK_CHILD_PATH, [JSON.stringify(options)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ask = async <T extends MockChildMessage['type']>(request: MockChildRequest, reply: T) => {
    const answer = next(child, reply);
    child.send(request);
    return answer;
  };
  const close = async () => {
    if (child.connected) child.disconnect();
    await stopChild(child);
  };
  try {
    const ready = await next(child, 'ready');
    return {
      pid: child.pid!,
      nodes: ready.nodes,
      async cpuMicros() {
        return (await ask({ type: 'cpu' }, 'cpu')).micros;
      },
      async setBehaviour(behaviour) {
        await ask({ type: 'behaviour', behaviour }, 'applied');
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
