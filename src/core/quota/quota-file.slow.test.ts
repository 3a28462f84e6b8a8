import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readQuotaFile } from './quota-file.js';

/*
 * Kill -9 a process in the middle of writing quotas.json over and over: every time, the file
 * must be absent (nothing written yet) or a complete, valid file. The quota module is
 * transpiled to plain JS in a temp dir so a bare `node` child can run it.
 */

const here = dirname(fileURLToPath(import.meta.url));
const core = dirname(here);
let work: string;

async function transpile(source: string, target: string): Promise<void> {
  const { outputText } = ts.transpileModule(await readFile(source, 'utf8'), {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  });
  await mkdir(dirname(target), { recursive: true });
  await writeFile(target, outputText);
}

const WRITER = `
import { writeQuotaFile } from './core/quota/quota-file.js';
const path = process.argv[2];
for (let i = 0; ; i++) {
  const snapshot = new Map();
  for (let n = 0; n < 200; n++) {
    snapshot.set('node-' + n, { used: i * 1000 + n, periodStart: '2026-08-01' });
  }
  await writeQuotaFile(path, snapshot);
  if (i === 0) process.stdout.write('first\\n');
}
`;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'cascade-crash-'));
  const quota = (await readdir(here)).filter((f) => f.endsWith('.ts') && !f.includes('.test.'));
  for (const file of [...quota.map((f) => join(here, f)), join(core, 'errors.ts')]) {
    const out = join(work, 'core', relative(core, file)).replace(/\.ts$/, '.js');
    await transpile(file, out);
  }
  await writeFile(join(work, 'writer.mjs'), WRITER);
});

afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

/** Runs the writer, kills it with SIGKILL after `afterMs`, resolves when it is gone. */
function killWriterAfter(path: string, afterMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(work, 'writer.mjs'), path], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    child.stdout.once('data', () => setTimeout(() => child.kill('SIGKILL'), afterMs));
    child.once('error', reject);
    child.once('exit', () => resolve());
  });
}

describe('writeQuotaFile under kill -9', () => {
  it('always leaves a complete file', async () => {
    const dir = join(work, 'data');
    await mkdir(dir);
    const path = join(dir, 'quotas.json');
    for (let round = 0; round < 30; round++) {
      await killWriterAfter(path, Math.floor(Math.random() * 40));
      const snapshot = await readQuotaFile(path);
      expect(snapshot.size).toBe(200);
      const base = snapshot.get('node-0')!.used;
      expect(snapshot.get('node-199')!.used).toBe(base + 199);
    }
    const temps = (await readdir(dir)).filter((f) => f !== 'quotas.json');
    // A kill between open and rename leaves that write's temp file (never the target broken).
    expect(temps.every((f) => /^\.quotas\.json\.\d+\.[0-9a-f]{12}\.tmp$/.test(f))).toBe(true);
  }, 120_000);
});
