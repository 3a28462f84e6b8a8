/** wrk as the hot-path benchmark's closed-loop load generator: its script, run and output. */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { LoadResult, LoadSpec } from './hotpath-load.js';

/**
 * wrk writes a request's headers in Lua table order, which is not the same from one wrk process
 * to the next (wrk 4.1.0 on Debian 12: eight runs in a row sent three orders). Runs can send
 * `Host, Content-Length, Content-Type`, then `Content-Length, Content-Type, Host`, then another.
 * Each new order is a new shape of node's `req.headers` object, so a benchmark that starts wrk
 * again every round would make the proxies' header reads polymorphic and deoptimize their
 * code in the rounds that meet a new order, where a user's single wrk run (or any one client
 * library) sends one order throughout. This `wrk.format` writes `Host` first and the others
 * sorted, as curl does: every run sends the same bytes.
 */
const FIXED_ORDER_FORMAT = `
function wrk.format(method, path, headers, body)
   method = method or wrk.method
   path = path or wrk.path
   headers = headers or wrk.headers
   body = body or wrk.body
   if not headers["Host"] then headers["Host"] = wrk.host end
   headers["Content-Length"] = body and string.len(body)
   local names = {}
   for name in pairs(headers) do if name ~= "Host" then names[#names + 1] = name end end
   table.sort(names)
   local lines = { string.format("%s %s HTTP/1.1", method, path), "Host: " .. headers["Host"] }
   for _, name in ipairs(names) do lines[#lines + 1] = string.format("%s: %s", name, headers[name]) end
   lines[#lines + 1] = ""
   lines[#lines + 1] = body or ""
   return table.concat(lines, "\\r\\n")
end
`;

/** Writes wrk's request script (POST with a JSON body, headers in one fixed order) into `dir`. */
export function writeWrkScript(dir: string, body: string): string {
  const file = path.join(dir, 'post.lua');
  const lua = [
    'wrk.method = "POST"',
    `wrk.body = ${JSON.stringify(body)}`,
    'wrk.headers["content-type"] = "application/json"',
    FIXED_ORDER_FORMAT,
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
