/** The flags of `cascade bench load`, checked and turned into a plan. */
import path from 'node:path';
import { UsageError } from '../core/index.js';
import { httpUrl, jsonBody, positiveNumber, wholeNumber } from './bench-flags.js';
import type { CommandIo } from './io.js';

/** Flags of `cascade bench load`. */
export interface BenchLoadOptions {
  readonly scenario?: string | undefined;
  readonly duration?: string | undefined;
  readonly warmup?: string | undefined;
  readonly connections?: string | undefined;
  readonly limitsScale?: string | undefined;
  readonly proxyUrl?: string | undefined;
  readonly config?: string | undefined;
  readonly body?: string | undefined;
  readonly out?: string | undefined;
  readonly json?: boolean | undefined;
}

/** The seed's two runs: node delays in config order (missing = 0). */
export const SCENARIOS = {
  run1: { delays: [] as number[], description: 'raw throughput (no artificial node latency)' },
  run2: {
    delays: [3, 5, 7],
    description: 'nodes with simulated latency (3, 5, 7 ms on the first three)',
  },
} as const;

/** run1 or run2. */
export type Scenario = keyof typeof SCENARIOS;

function scenarioOf(value: string | undefined): Scenario {
  const name = value ?? 'run1';
  if (name !== 'run1' && name !== 'run2') {
    throw new UsageError(`--scenario ${JSON.stringify(name)}: expected run1 or run2`);
  }
  return name;
}

/** `--limits-scale`: a factor > 0, or auto (the default). */
function limitsScaleOf(value: string | undefined): number | 'auto' {
  if (value === undefined || value.trim() === '' || value.trim() === 'auto') return 'auto';
  return positiveNumber('--limits-scale', value, 1);
}

/** What a load run will do. */
export interface LoadPlan {
  readonly scenario: Scenario;
  readonly durationS: number;
  readonly warmupS: number;
  readonly connections: number;
  readonly limits: number | 'auto';
  readonly external: string | undefined;
  readonly body: string;
  readonly outDir: string;
}

/** Checks every flag (usage errors before anything starts). */
export function planLoad(options: BenchLoadOptions, io: CommandIo): LoadPlan {
  return {
    scenario: scenarioOf(options.scenario),
    durationS: positiveNumber('--duration', options.duration, 10),
    warmupS: positiveNumber('--warmup', options.warmup, 2, true),
    connections: wholeNumber('--connections', options.connections, 100),
    limits: limitsScaleOf(options.limitsScale),
    external: httpUrl('--proxy-url', options.proxyUrl),
    body: jsonBody(options.body),
    outDir: path.resolve(io.cwd, options.out ?? 'results'),
  };
}
