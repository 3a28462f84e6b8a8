/**
 * A worker of `cascade serve --workers N` that starts late, on the test's word: a preload
 * (NODE_OPTIONS=--require, inherited by every worker) holds the worker with cluster id `id`
 * before any of cascade runs in it — as a slow start on a busy machine or a restart after a
 * crash would — until `release()`. The primary and the other workers run as usual.
 */
import { writeFileSync } from 'node:fs';
import type { TempDir } from './temp-dir.js';

export interface HeldWorker {
  /** The environment to start `cascade serve --workers N` with. */
  readonly env: Record<string, string>;
  /** Lets the worker start. */
  release(): void;
}

export function holdWorker(temp: TempDir, id: number): HeldWorker {
  const release = temp.path(`release-worker-${id}`);
  const preload = temp.path(`hold-worker-${id}.cjs`);
  writeFileSync(
    preload,
    `if (require('node:cluster').worker?.id === ${id}) {\n` +
      `  const cell = new Int32Array(new SharedArrayBuffer(4));\n` +
      `  const { existsSync } = require('node:fs');\n` +
      // Gone with the test's directory too, should the test end without releasing it.
      `  while (!existsSync(${JSON.stringify(release)}) && existsSync(${JSON.stringify(temp.dir)}))\n` +
      `    Atomics.wait(cell, 0, 0, 20);\n}\n`,
  );
  return {
    env: { NODE_OPTIONS: `--require ${preload}` },
    release: () => writeFileSync(release, ''),
  };
}
