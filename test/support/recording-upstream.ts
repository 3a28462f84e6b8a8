import { spawn, type ChildProcess } from 'node:child_process';

const upstreams: ChildProcess[] = [];

/** Stops every recording upstream started so far. */
export function stopRecordingUpstreams(): void {
  for (const child of upstreams.splice(0)) child.kill('SIGKILL');
}

/**
 * An upstream in a process of its own (so the load this test generates cannot bunch its
 * arrivals): it records when each request arrived (and at which path: several nodes can share
 * it, one path each) and answers after `delayMs`; `report()` asks it for the arrival times
 * (ms), their paths and its peak concurrency (all paths together), and `stallMs`: the longest
 * its own event loop was held up. A request that arrives during such a stall is stamped when
 * the stall ends, so on a starved machine stamps can bunch by up to that much.
 */
interface UpstreamReport {
  arrivals: number[];
  peak: number;
  paths: string[];
  stallMs: number;
}

export async function recordingUpstream(delayMs = 0): Promise<{
  url: string;
  report(): Promise<UpstreamReport>;
}> {
  const program = `
    const http = require('node:http');
    const loop = require('node:perf_hooks').monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    const arrivals = []; const paths = []; let inFlight = 0; let peak = 0;
    const server = http.createServer((req, res) => {
      if (req.url === '/__report') {
        res.end(JSON.stringify({ arrivals, peak, paths, stallMs: loop.max / 1e6 })); return; }
      arrivals.push(performance.now()); paths.push(req.url); inFlight++; peak = Math.max(peak, inFlight);
      req.resume();
      req.on('end', () => setTimeout(() => { inFlight--;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"jsonrpc":"2.0","id":1,"result":1}'); }, ${delayMs}));
    });
    server.listen(0, '127.0.0.1', () => console.log('port ' + server.address().port));
    process.on('SIGTERM', () => process.exit(0));`;
  const child = spawn(process.execPath, ['-e', program], { stdio: ['ignore', 'pipe', 'inherit'] });
  upstreams.push(child);
  const port = await new Promise<number>((resolve) =>
    child.stdout.once('data', (chunk: Buffer) =>
      resolve(Number(/port (\d+)/.exec(chunk.toString())![1])),
    ),
  );
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    report: async () => (await (await fetch(`${url}/__report`)).json()) as UpstreamReport,
  };
}
