/**
 * One run of scan-instructions.ts: loads a checkout's built scans, warms one of them up, then
 * calls it `calls` more times (0 for the baseline run).
 *
 *     node scan-instructions-worker.js ROOT SCAN CALLS
 */
import { pathToFileURL } from 'node:url';
import { BODY } from './hotpath-placement.js';

/** The scans measured, with what each row says. */
export const SCANS = {
  request: 'parseRequest, getBalance request (jsonrpc, id, method, params)',
  shape: 'jsonShape, getBalance answer',
  slot: 'contextSlotOf, getBalance answer',
} as const;
export type ScanName = keyof typeof SCANS;

/** A mock node's getBalance answer, as cascade receives it. */
const ANSWER =
  '{"jsonrpc":"2.0","result":{"context":{"apiVersion":"2.0.15","slot":341197053},"value":0},"id":"8f2c1d3e-5b7a-4c9e-a1f0-3d2b6e8c9a71"}';
const WARM_UP_CALLS = 300_000;

async function run(root: string, scan: ScanName, calls: number): Promise<void> {
  const built = (file: string): Promise<Record<string, unknown>> =>
    import(pathToFileURL(`${root}/dist/core/protocol/${file}`).href) as Promise<
      Record<string, unknown>
    >;
  let call: (body: Buffer) => number;
  if (scan === 'request') {
    const { parseRequest } = (await built('rpc-request.js')) as {
      parseRequest: (body: Buffer, registry: unknown) => { ok: boolean };
    };
    const { MethodRegistry } = (await built('method-registry.js')) as {
      MethodRegistry: new () => unknown;
    };
    const registry = new MethodRegistry();
    call = (body) => (parseRequest(body, registry).ok ? 1 : 0);
  } else if (scan === 'shape') {
    const { jsonShape } = (await built('json-shape.js')) as {
      jsonShape: (body: Buffer) => number;
    };
    call = jsonShape;
  } else {
    const { contextSlotOf } = (await built('head-scan.js')) as {
      contextSlotOf: (body: Buffer) => number;
    };
    call = contextSlotOf;
  }
  // A fresh Buffer per call, as each request and answer arrives in one.
  const text = scan === 'request' ? BODY : ANSWER;
  const bodies = Array.from({ length: 64 }, () => Buffer.from(text));
  let sink = 0;
  for (let i = 0; i < WARM_UP_CALLS; i++) sink += call(bodies[i & 63]!);
  for (let i = 0; i < calls; i++) sink += call(bodies[i & 63]!);
  // Keeps the calls from being optimized away.
  if (sink === -1) process.stdout.write('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [root, scan, calls] = process.argv.slice(2);
  if (root === undefined || !(scan! in SCANS) || !Number.isInteger(Number(calls)))
    throw new Error('usage: scan-instructions-worker.js ROOT request|shape|slot CALLS');
  await run(root, scan as ScanName, Number(calls));
}
