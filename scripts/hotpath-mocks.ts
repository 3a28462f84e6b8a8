/**
 * The hot-path benchmark's upstreams: `count` mock nodes in one child process (forked by
 * bench-hotpath, so it inherits the load generator's CPU). Over IPC it reports the node URLs
 * once started, applies `{ delayMs }` to every node (answering `{ ok: true }`), and closes
 * everything when the parent disconnects.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startMockNodes } from '../src/mock/index.js';

/** The parent's handle on the mock process. */
export interface MockProcess {
  readonly pid: number;
  readonly urls: readonly string[];
  /** Sets every node's base latency (ms); resolves once applied. */
  setDelay(delayMs: number): Promise<void>;
  stop(): Promise<void>;
}

interface Ready {
  readonly urls: string[];
}

async function serve(count: number): Promise<void> {
  const names = Array.from({ length: count }, (_, i) => ({ name: `hotpath-${i + 1}` }));
  const nodes = await startMockNodes(names);
  process.on('message', (message: { delayMs: number }) => {
    for (const node of nodes) node.setBehaviour({ delayMs: message.delayMs, jitterMs: 0 });
    process.send?.({ ok: true });
  });
  process.on('disconnect', () => void Promise.all(nodes.map((node) => node.close())));
  process.send?.({ urls: nodes.map((node) => node.url) } satisfies Ready);
}

function once<T>(child: ChildProcess): Promise<T> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null): void =>
      reject(new Error(`mock process exited (${code})`));
    child.once('exit', onExit);
    child.once('message', (message: T) => {
      child.off('exit', onExit);
      resolve(message);
    });
  });
}

/** Forks the mock process and waits for its nodes to listen. */
export async function startMockProcess(count: number): Promise<MockProcess> {
  const child = fork(fileURLToPath(import.meta.url), ['--serve', String(count)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const { urls } = await once<Ready>(child);
  return {
    pid: child.pid!,
    urls,
    async setDelay(delayMs) {
      const ack = once<{ ok: boolean }>(child);
      child.send({ delayMs });
      await ack;
    },
    stop() {
      if (child.exitCode !== null) return Promise.resolve();
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.disconnect();
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      return exited.finally(() => clearTimeout(timer));
    },
  };
}

const serveAt = process.argv.indexOf('--serve');
if (serveAt !== -1) await serve(Number(process.argv[serveAt + 1] ?? '2'));
