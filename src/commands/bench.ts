/**
 * `cascade bench [compare|direct|proxy]`: the TLS-amortization comparison. A naive client
 * (new connection and TLS session per request) against the provider directly and through a
 * cascade proxy with warm pooled connections. Without --rpc-url the provider is a local TLS
 * mock with a simulated round trip; the proxy is `cascade serve` in a child process that trusts
 * the mock's certificate (NODE_EXTRA_CA_CERTS). The load modes live in bench-load.ts.
 */
import path from 'node:path';
import { UsageError } from '../core/index.js';
import { startMockNode, type MockNode } from '../mock/index.js';
import { describeMachine } from '../bench/machine.js';
import { runNaiveClient, type NaiveRun } from '../bench/naive-client.js';
import { progressBar } from '../bench/progress-bar.js';
import { redactUrl } from '../bench/redact-url.js';
import { resultJson, writeResultFiles } from '../bench/result-files.js';
import { tlsResultFiles } from '../bench/tls-files.js';
import {
  compareModes,
  methodOf,
  summarizeMode,
  type TlsMode,
  type TlsModeSummary,
  type TlsReport,
} from '../bench/tls-amortization.js';
import {
  displayPath,
  httpUrl,
  jsonBody,
  optionalPositive,
  positiveNumber,
  wholeNumber,
  withInterrupt,
} from './bench-flags.js';
import {
  PACKAGE_ROOT,
  benchConfigToml,
  startProxyProcess,
  type ProxyProcess,
} from './bench-processes.js';
import { renderTlsTable } from './bench-render.js';
import type { CommandIo, ExitCode } from './io.js';

/** Flags of the TLS modes (strings as commander hands them over, env defaults applied). */
export interface BenchTlsOptions {
  readonly rpcUrl?: string | undefined;
  readonly proxyUrl?: string | undefined;
  readonly requests?: string | undefined;
  readonly concurrency?: string | undefined;
  readonly qps?: string | undefined;
  readonly body?: string | undefined;
  readonly rtt?: string | undefined;
  readonly warmup?: string | undefined;
  readonly timeout?: string | undefined;
  readonly out?: string | undefined;
  readonly json?: boolean | undefined;
}

/** Which paths `cascade bench <mode>` runs. */
export type TlsBenchMode = 'compare' | TlsMode;

interface TlsPlan {
  readonly modes: readonly TlsMode[];
  readonly rpcUrl: string | undefined;
  readonly proxyUrl: string | undefined;
  readonly requests: number;
  readonly concurrency: number;
  readonly qps: number | undefined;
  readonly body: string;
  readonly rttMs: number;
  readonly warmup: number;
  readonly timeoutMs: number;
  readonly outDir: string;
}

const PUBLIC_PRICES = 'config/provider_config/public.toml';

function plan(mode: TlsBenchMode, options: BenchTlsOptions, io: CommandIo): TlsPlan {
  const concurrency = wholeNumber('--concurrency', options.concurrency, 8);
  const rpcUrl = httpUrl('--rpc-url', options.rpcUrl);
  const proxyUrl = httpUrl('--proxy-url', options.proxyUrl);
  const modes: TlsMode[] = mode === 'compare' ? ['direct', 'proxy'] : [mode];
  if (proxyUrl && !rpcUrl && modes.includes('direct')) {
    throw new UsageError(
      '--proxy-url without --rpc-url: the direct path needs the provider that proxy forwards to',
      'pass --rpc-url too, or run `cascade bench proxy --proxy-url …` alone',
    );
  }
  return {
    modes,
    rpcUrl,
    proxyUrl,
    requests: wholeNumber('--requests', options.requests, 200),
    concurrency,
    qps: optionalPositive('--qps', options.qps),
    body: jsonBody(options.body),
    rttMs: positiveNumber('--rtt', options.rtt, 50, true),
    warmup: wholeNumber('--warmup', options.warmup, 2 * concurrency, 0),
    timeoutMs: wholeNumber('--timeout', options.timeout, 10_000),
    outDir: path.resolve(io.cwd, options.out ?? 'results'),
  };
}

interface Targets {
  readonly provider: string;
  readonly ca: string | undefined;
  readonly proxy: string | undefined;
  readonly mock: MockNode | undefined;
  readonly proxyProcess: ProxyProcess | undefined;
}

async function startTargets(p: TlsPlan): Promise<Targets> {
  const mock = p.rpcUrl
    ? undefined
    : await startMockNode({ name: 'provider', tls: true, rttMs: p.rttMs });
  const provider = p.rpcUrl ?? mock!.url;
  if (!p.modes.includes('proxy') || p.proxyUrl) {
    return { provider, ca: mock?.cert, proxy: p.proxyUrl, mock, proxyProcess: undefined };
  }
  try {
    const config = benchConfigToml(
      [
        {
          name: 'provider',
          url: provider,
          tier: 0,
          rpsLimit: Infinity,
          maxConcurrent: Infinity,
          pricingPath: path.join(PACKAGE_ROOT, PUBLIC_PRICES),
        },
      ],
      true,
    );
    const proxyProcess = await startProxyProcess(config, mock?.cert);
    return { provider, ca: mock?.cert, proxy: proxyProcess.url, mock, proxyProcess };
  } catch (err) {
    await mock?.close();
    throw err;
  }
}

/** A failed warm-up explains a failed run (e.g. a cold pool missing the attempt deadline). */
function warnOnFailures(mode: TlsMode, warmup: NaiveRun, io: CommandIo): void {
  const failed = warmup.samples.filter((s) => !s.ok);
  if (failed.length === 0) return;
  const first = failed[0]!;
  io.err(
    `warning: ${failed.length} of ${warmup.samples.length} warm-up requests (${mode}) failed; first: ${first.error ?? `HTTP ${first.status}`}`,
  );
}

async function runMode(
  mode: TlsMode,
  url: string,
  ca: string | undefined,
  p: TlsPlan,
  io: CommandIo,
  signal: AbortSignal,
): Promise<NaiveRun> {
  const common = {
    url,
    body: p.body,
    concurrency: p.concurrency,
    qps: p.qps,
    ca,
    timeoutMs: p.timeoutMs,
    signal,
  };
  // Unmeasured: lets the proxy open its pooled connections (and the JIT warm up) first.
  if (p.warmup > 0)
    warnOnFailures(mode, await runNaiveClient({ ...common, requests: p.warmup }), io);
  const bar = progressBar(process.stderr, mode, p.requests);
  const run = await runNaiveClient({
    ...common,
    requests: p.requests,
    onProgress: (n) => bar.update(n),
  });
  bar.finish();
  return run;
}

function reportOf(
  p: TlsPlan,
  t: Targets,
  summaries: Partial<Record<TlsMode, TlsModeSummary>>,
  startedAt: string,
): TlsReport {
  const { direct, proxy } = summaries;
  return {
    benchmark: 'tls-amortization',
    startedAt,
    finishedAt: new Date().toISOString(),
    machine: describeMachine(),
    parameters: {
      target: t.mock ? `local TLS mock node ${t.mock.url}` : redactUrl(t.provider),
      proxy: t.proxyProcess
        ? 'cascade serve (child process, one node, warm pooled keep-alive connections)'
        : t.proxy
          ? redactUrl(t.proxy)
          : 'none',
      requests: p.requests,
      concurrency: p.concurrency,
      qps: p.qps ?? null,
      body: p.body,
      method: methodOf(p.body),
      rttMs: t.mock ? p.rttMs : null,
      warmupRequests: p.warmup,
      timeoutMs: p.timeoutMs,
    },
    modes: summaries,
    comparison: direct && proxy ? compareModes(direct, proxy) : null,
  };
}

/** `cascade bench [compare|direct|proxy]`. */
export async function runBenchTls(
  mode: TlsBenchMode,
  options: BenchTlsOptions,
  io: CommandIo,
): Promise<ExitCode> {
  const p = plan(mode, options, io);
  const startedAt = new Date().toISOString();
  const targets = await startTargets(p);
  const runs: Partial<Record<TlsMode, NaiveRun>> = {};
  const summaries: Partial<Record<TlsMode, TlsModeSummary>> = {};
  let interrupted = false;
  try {
    await withInterrupt(async (signal) => {
      for (const m of p.modes) {
        const url = m === 'direct' ? targets.provider : targets.proxy!;
        // Only the local mock's certificate needs trusting, and only on the direct path.
        runs[m] = await runMode(m, url, m === 'direct' ? targets.ca : undefined, p, io, signal);
        summaries[m] = summarizeMode(m, redactUrl(url), runs[m]);
        if (signal.aborted) break;
      }
      interrupted = signal.aborted;
    });
  } finally {
    await targets.proxyProcess?.close();
    await targets.mock?.close();
  }
  if (interrupted) {
    io.err('interrupted: no result files written');
    return 1;
  }
  const report = reportOf(p, targets, summaries, startedAt);
  const files = writeResultFiles(p.outDir, tlsResultFiles(report, runs));
  io.out(
    options.json
      ? resultJson(report)
      : renderTlsTable(
          report,
          files.map((f) => displayPath(f, io.cwd)),
        ),
  );
  const failed = Object.values(summaries).some((s) => s.succeeded === 0);
  return failed ? 1 : 0;
}
