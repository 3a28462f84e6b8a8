/**
 * `cascade bench load` and `cascade bench overhead` as a user runs them (the built CLI), at
 * tiny sizes, into a temp --out dir: the files each writes, and that their figures add up.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Percentiles } from '../support/bench-output.js';
import { expectOrdered, expectWellFormedSvg, readJson } from '../support/bench-output.js';
import { assertBuilt, runCli } from '../support/cli-process.js';
import { useTempDir } from '../support/temp-dir.js';

const temp = useTempDir('cascade-bench-');
beforeAll(() => assertBuilt());

describe('cascade bench load', () => {
  it('drives run1 through a spawned proxy, fits the limits to the machine, and accounts for every request', async () => {
    const result = await runCli(
      [
        'bench',
        'load',
        '--scenario',
        'run1',
        '--duration',
        '1',
        '--warmup',
        '0',
        '--connections',
        '10',
        '--out',
        temp.dir,
      ],
      { timeoutMs: 60_000 },
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Rate-limit rejections/s');

    type Node = {
      name: string;
      tier: number;
      rpsLimit: number;
      successPerS: number;
      rateLimitSkipsPerS: number;
    };
    const report = readJson<{
      scenario: string;
      parameters: {
        limitsScale: number;
        limitsScaleMode: string;
        calibrationRps: number;
        connections: number;
      };
      throughput: {
        responses: number;
        ok: number;
        non2xx: number;
        errors: number;
        elapsedS: number;
        averageRps: number;
        peakRps: number;
        steadyRps: number;
        perSecond: number[];
      };
      latencyMs: Percentiles;
      nodes: Node[];
      tiers: Array<{ tier: number; successPerS: number; rpsLimit: number }>;
      upstreamSuccessPerS: number;
      proxyProcess: { cpuMicrosPerRequest: number; cpuCores: number; peakRssMiB: number } | null;
    }>(temp.path('run1.json'));
    expect(report.scenario).toBe('run1');
    expect(report.parameters.limitsScaleMode).toBe('auto');
    expect(report.parameters.calibrationRps).toBeGreaterThan(0);
    expect(report.parameters.limitsScale).toBeGreaterThan(0);

    const t = report.throughput;
    expect(t.ok).toBeGreaterThan(0);
    expect(t.ok + t.non2xx).toBe(t.responses);
    expect(t.peakRps).toBeGreaterThanOrEqual(t.steadyRps);
    expectOrdered(report.latencyMs);

    expect(report.nodes.map((n) => [n.name, n.tier])).toEqual([
      ['Helius-1', 0],
      ['Helius-2', 0],
      ['Alchemy-1', 1],
      ['Alchemy-2', 1],
      ['Triton-1', 2],
      ['public-mirror', 2],
    ]);
    expect(report.nodes[0]!.rpsLimit).toBe(
      Math.max(1, Math.round(30_000 * report.parameters.limitsScale)),
    );
    // Every client success was served by exactly one node. The windows differ at the edges: the
    // counters are read a moment after the client window opens, and requests cut off when the
    // load stops may reach a node after the client gave up — hence the slack.
    const upstream = report.nodes.reduce((sum, n) => sum + n.successPerS * t.elapsedS, 0);
    const slack = 0.05 * t.ok + 2 * report.parameters.connections;
    expect(Math.abs(upstream - t.ok)).toBeLessThanOrEqual(slack);
    const tierSum = report.tiers.reduce((sum, tier) => sum + tier.successPerS, 0);
    expect(tierSum).toBeCloseTo(report.upstreamSuccessPerS, -1);

    if (process.platform === 'linux') {
      expect(report.proxyProcess!.cpuMicrosPerRequest).toBeGreaterThan(0);
      expect(report.proxyProcess!.peakRssMiB).toBeGreaterThan(10);
    }
    const md = readFileSync(temp.path('run1.md'), 'utf8');
    expect(md).toContain('| Tier | Node | rps_limit | Delay | req/s | Rate-limit rejections/s |');
    expect(md).toContain('End-to-end latency p99');
    expectWellFormedSvg(temp.path('run1.svg'));
  }, 60_000);
});

describe('cascade bench overhead', () => {
  it('compares warm keep-alive paths at a fixed rate and reports the difference', async () => {
    const result = await runCli(
      ['bench', 'overhead', '--rate', '200', '--duration', '1', '--warmup', '0', '--out', temp.dir],
      { timeoutMs: 60_000 },
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Added by cascade');
    type Path = {
      responses: number;
      ok: number;
      non2xx: number;
      errors: number;
      achievedRps: number;
      latencyMs: Percentiles;
    };
    const report = readJson<{
      parameters: { rate: number };
      direct: Path;
      proxy: Path;
      addedMs: { p50: number; p99: number };
    }>(temp.path('overhead.json'));
    expect(report.parameters.rate).toBe(200);
    for (const path of [report.direct, report.proxy]) {
      expect(path.ok).toBeGreaterThan(0);
      expect(path.ok + path.non2xx).toBe(path.responses);
      expect(path.errors).toBe(0);
      // A fixed rate: never much above it (the last partial second can add a burst).
      expect(path.achievedRps).toBeLessThanOrEqual(200 * 2);
      expectOrdered(path.latencyMs);
    }
    expect(report.addedMs.p50).toBeCloseTo(
      report.proxy.latencyMs.p50 - report.direct.latencyMs.p50,
      3,
    );
    expect(report.addedMs.p99).toBeCloseTo(
      report.proxy.latencyMs.p99 - report.direct.latencyMs.p99,
      3,
    );
    expect(readFileSync(temp.path('overhead.md'), 'utf8')).toContain('| Added by cascade |');
  }, 60_000);
});
