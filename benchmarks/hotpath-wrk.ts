/** wrk as the hot-path benchmark's closed-loop load generator: its script, run and output. */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { LoadResult, LoadSpec } from './hotpath-load.js';

/** Writes wrk's request script (POST with a JSON body) into `dir`; returns its path. */
export function writeWrkScript(dir: string, body: string): string {
  const file = path.join(dir, 'post.lua');
  const lua = [
    'wrk.method = "POST"',
    `wrk.body = ${JSON.stringify(body)}`,
    'wrk.headers["content-type"] = "application/json"',
    '',
  ].join('\n');
  writeFileSync(file, lua);
  return file;
}

const UNIT_US: Record<string, number> = { us: 1, ms: 1e3, s: 1e6, m: 6e7 };

function durationUs(text: string | undefined): number {
  const match = /^([\d.]+)(us|ms|s|m)$/.exec(text ?? '');
  return match ? Number(match[1]) * UNIT_US[match[2]!]! : NaN;
}

/** Reads the numbers out of `wrk --latency` output. */
export function parseWrk(output: string, spec: LoadSpec): LoadResult {
  const percentile = (p: number): number =>
    durationUs(new RegExp(`^\\s+${p}%\\s+(\\S+)`, 'm').exec(output)?.[1]);
  const requests = Number(/(\d+) requests in/.exec(output)?.[1] ?? NaN);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(
    output,
  );
  const socketErrors = socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0;
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(output)?.[1] ?? 0);
  return {
    tool: 'wrk',
    connections: spec.connections,
    durationS: spec.durationS,
    requests,
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1] ?? NaN),
    p50Us: percentile(50),
    p90Us: percentile(90),
    p99Us: percentile(99),
    maxUs: durationUs(/^\s+Latency\s+\S+\s+\S+\s+(\S+)/m.exec(output)?.[1]),
    errors: socketErrors + non2xx,
  };
}

/** Closed-loop load with wrk (one thread; the caller's CPU affinity is inherited). */
export function runWrk(spec: LoadSpec, script: string): Promise<LoadResult> {
  const args = [
    '-t1',
    `-c${spec.connections}`,
    `-d${spec.durationS}s`,
    '--timeout',
    '10s',
    '--latency',
    '-s',
    script,
    spec.url,
  ];
  return new Promise((resolve, reject) => {
    execFile('wrk', args, { timeout: (spec.durationS + 30) * 1000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`wrk failed: ${err.message}\n${stderr}`));
      else resolve(parseWrk(stdout, spec));
    });
  });
}
