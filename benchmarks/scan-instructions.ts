/**
 * Instructions per call of the request path's byte scans, this checkout against another built
 * one (or alone): the request scan (`parseRequest` on the hot-path benchmark's getBalance body),
 * the answer's shape check (`jsonShape`) and the Solana envelope's slot (`contextSlotOf`) on a
 * getBalance answer. Each is run in a fresh node under valgrind's callgrind twice — after the
 * same warm-up, once with no counted calls and once with `--calls` — and the difference divided
 * by the calls: start-up, warm-up and compilation cancel out, what is left is the steady cost of
 * one call (the function, the JS around it, its allocation). Deterministic to a few
 * instructions, so a change of 1% of one scan shows, where a whole-request count moves by
 * thousands from run to run.
 *
 *     npm run bench:scan-instr [-- --other ../before] [--calls 200000] [--out results/scan-instructions.md]
 *
 * V8's concurrent compiler is turned off: under valgrind its thread is starved, and the scans
 * would be counted in baseline code, not the optimized code a loaded server runs.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { hasCallgrind } from './hotpath-callgrind.js';
import { SCANS, type ScanName } from './scan-instructions-worker.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const WORKER = fileURLToPath(new URL('./scan-instructions-worker.js', import.meta.url));

/** Instructions valgrind counted for one run of the worker. */
function collected(root: string, scan: ScanName, calls: number): number {
  const run = spawnSync(
    'valgrind',
    [
      '--tool=callgrind',
      '--callgrind-out-file=/dev/null',
      process.execPath,
      '--no-concurrent-recompilation',
      WORKER,
      root,
      scan,
      String(calls),
    ],
    { encoding: 'utf8', timeout: 600_000 },
  );
  const found = /Collected : (\d+)/.exec(run.stderr ?? '');
  if (run.status !== 0 || found === null)
    throw new Error(`valgrind run of ${scan} in ${root} failed: ${run.stderr || run.error}`);
  return Number(found[1]);
}

function perCall(root: string, scan: ScanName, calls: number): number {
  return (collected(root, scan, calls) - collected(root, scan, 0)) / calls;
}

function main(): void {
  const { values } = parseArgs({
    options: {
      other: { type: 'string' },
      calls: { type: 'string', default: '200000' },
      out: { type: 'string' },
    },
  });
  if (!hasCallgrind()) throw new Error('valgrind (callgrind) is not installed');
  const calls = Number(values.calls);
  if (!Number.isInteger(calls) || calls <= 0)
    throw new Error(`--calls ${values.calls}: give a positive whole number of calls`);
  const roots: Array<[string, string]> = [['this', REPO_ROOT]];
  if (values.other !== undefined) roots.push(['other', path.resolve(values.other)]);
  const lines = [
    `Instructions per call (callgrind, ${calls.toLocaleString('en-US')} calls after warm-up; ` +
      `node ${process.version}). this = ${REPO_ROOT}` +
      (values.other === undefined ? '' : `, other = ${path.resolve(values.other)}`),
    '',
    `| scan | ${roots.map(([name]) => name).join(' | ')} |`,
    `| --- | ${roots.map(() => '---').join(' | ')} |`,
  ];
  for (const scan of Object.keys(SCANS) as ScanName[]) {
    const cells = roots.map(([, root]) => Math.round(perCall(root, scan, calls)));
    lines.push(`| ${SCANS[scan]} | ${cells.map((c) => c.toLocaleString('en-US')).join(' | ')} |`);
    process.stdout.write(`${lines.at(-1)}\n`);
  }
  const text = `${lines.join('\n')}\n`;
  process.stdout.write(`\n${text}`);
  if (values.out !== undefined) writeFileSync(values.out, text);
}

main();
