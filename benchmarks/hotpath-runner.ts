/**
 * Runs the hot-path scenarios. All targets of a phase are started fresh together (each proxy
 * pinned to the proxy CPU, idle unless loaded), warmed up, then measured in 1 s windows taking
 * turns — direct, cascade, reference, keyed, nginx, then back: nginx, keyed, … (turnOrder) —
 * so slow spells of a shared machine spread over every target instead of spoiling one.
 * Phase 1 (mock delay 0) runs (a), (b) and (c); phase 2 (delay 5 ms, targets started fresh
 * again so peak RSS is theirs) runs (d), one full-length window per target.
 */
import { runAutocannon, type LoadResult } from './hotpath-load.js';
import { LoadClient } from './hotpath-load-client.js';
import { keyedUrl } from './hotpath-keyed.js';
import { runWrk, writeWrkScript } from './hotpath-wrk.js';
import type { MockProcess } from '../src/mock/index.js';
import { readCpuBusy, readProcess, readProcesses } from '../src/bench/process-stats.js';
import {
  TARGET_NAMES,
  summarise,
  type Results,
  type TargetName,
  type Window,
} from './hotpath-results.js';
import {
  directTarget,
  startCascade,
  startNginx,
  startReference,
  type Target,
  type TargetSetup,
} from './hotpath-targets.js';

/** What to run. */
export interface RunnerOptions {
  /** Seconds measured per target in (b), (c) and (d) (that many 1 s windows in (b) and (c)). */
  readonly durationS: number;
  /**
   * 1 s windows per target in (a), the CPU-per-request scenario: more than the others, since
   * its ratio is judged against a limit 10% away and one window on a shared host can be off
   * by 30%.
   */
  readonly cpuWindows: number;
  /** Warm-up per target before phase 1 (delay 0). */
  readonly warmUpS: number;
  /** Warm-up per fresh target before (d): Node servers take seconds to settle at 200 connections. */
  readonly crowdWarmUpS: number;
  readonly rate: number;
  readonly useWrk: boolean;
  readonly useNginx: boolean;
  readonly body: string;
  /** The CPU the proxies are pinned to (undefined: not pinned). */
  readonly proxyCpu: number | undefined;
}

/** Upstream latency of scenario (d), ms. */
export const CROWD_DELAY_MS = 5;
const WINDOW_S = 1;
const FIXED_RATE_CONNECTIONS = 64;

interface CpuSnapshot {
  readonly target: number | undefined;
  readonly mocks: number | undefined;
  readonly proxyCpu: number | undefined;
}

type Targets = Map<TargetName, Target>;

/**
 * Where each target takes its turn in a round: the reference between the two cascades, so
 * both per-round ratios the CPU targets judge pair neighbouring windows (a shared host's speed
 * drifts within seconds); every other round runs backwards, so a host that speeds up or slows
 * down through a round favours no target.
 */
const TURN: Record<TargetName, number> = {
  direct: 0,
  cascade: 1,
  reference: 2,
  keyed: 3,
  nginx: 4,
};

/** The targets `names` in the order they take turns in round `round` (0-based). */
export function turnOrder(names: readonly TargetName[], round: number): TargetName[] {
  const order = [...names].sort((a, b) => TURN[a] - TURN[b]);
  return round % 2 === 0 ? order : order.reverse();
}

/** VmHWM of a target's processes in bytes; undefined for direct (nothing of its own to measure). */
function peakRss(target: Target): number | undefined {
  const pids = target.pids();
  const kib = pids.length > 0 ? readProcesses(pids)?.peakRssKiB : undefined;
  return kib === undefined ? undefined : kib * 1024;
}

/** Microseconds to seconds, keeping undefined. */
const seconds = (micros: number | undefined): number | undefined =>
  micros === undefined ? undefined : micros / 1e6;

/** The scenarios of one benchmark run. */
export class HotpathRunner {
  readonly #wrkScript: string | undefined;

  constructor(
    readonly opts: RunnerOptions,
    readonly mocks: MockProcess,
    readonly cascadeConfig: string,
    readonly firstTier: readonly string[],
    readonly setup: TargetSetup,
    /** The keyed variant's config (hotpath-keyed.ts); absent: no keyed target. */
    readonly keyedConfig?: string,
  ) {
    this.#wrkScript = opts.useWrk ? writeWrkScript(setup.tmpDir, opts.body) : undefined;
  }

  /** The targets measured, in table order. */
  names(): TargetName[] {
    return TARGET_NAMES.filter(
      (name) =>
        (name !== 'nginx' || this.opts.useNginx) &&
        (name !== 'keyed' || this.keyedConfig !== undefined),
    );
  }

  /** Closed-loop load with wrk, else autocannon. */
  closedLoop(url: string, connections: number, durationS: number): Promise<LoadResult> {
    const spec = { url, body: this.opts.body, connections, durationS };
    return this.#wrkScript ? runWrk(spec, this.#wrkScript) : runAutocannon(spec);
  }

  start(name: TargetName, nodeArgs: readonly string[] = []): Promise<Target> {
    switch (name) {
      case 'direct':
        return Promise.resolve(directTarget(this.firstTier[0]!));
      case 'reference':
        return startReference(this.setup, this.firstTier, nodeArgs);
      case 'cascade':
        return startCascade(this.setup, this.cascadeConfig, nodeArgs);
      case 'keyed':
        return startCascade(this.setup, this.keyedConfig!, nodeArgs).then((target) => ({
          ...target,
          url: keyedUrl(target.url),
        }));
      case 'nginx':
        return startNginx(this.setup, this.firstTier);
    }
  }

  async #startAll(): Promise<Targets> {
    const targets: Targets = new Map();
    try {
      for (const name of this.names()) targets.set(name, await this.start(name));
    } catch (err) {
      await this.#stopAll(targets);
      throw err;
    }
    return targets;
  }

  async #stopAll(targets: Targets): Promise<void> {
    await Promise.all([...targets.values()].map((target) => target.stop()));
  }

  #snapshot(pids: readonly number[]): CpuSnapshot {
    return {
      target: pids.length > 0 ? seconds(readProcesses(pids)?.cpuMicros) : 0,
      mocks: seconds(readProcess(this.mocks.pid)?.cpuMicros),
      proxyCpu:
        this.opts.proxyCpu === undefined ? undefined : seconds(readCpuBusy(this.opts.proxyCpu)),
    };
  }

  /** Runs one load and accounts the CPU used around it. */
  async measure(target: Target, load: () => Promise<LoadResult>): Promise<Window> {
    const pids = target.pids();
    const before = this.#snapshot(pids);
    const started = performance.now();
    const result = await load();
    const wallS = (performance.now() - started) / 1000;
    const after = this.#snapshot(pids);
    const delta = (pick: (s: CpuSnapshot) => number | undefined): number | undefined => {
      const a = pick(after);
      const b = pick(before);
      return a === undefined || b === undefined ? undefined : a - b;
    };
    const targetCpuS = delta((s) => s.target);
    const proxyCpuS = delta((s) => s.proxyCpu);
    return {
      load: result,
      cpu: {
        wallS,
        targetCpuS: pids.length > 0 ? targetCpuS : undefined,
        mocksCpuS: delta((s) => s.mocks),
        proxyCpuOthers:
          proxyCpuS === undefined || targetCpuS === undefined
            ? undefined
            : Math.max(0, proxyCpuS - targetCpuS) / wallS,
      },
    };
  }

  /** `rounds` windows per target (default: one per second of durationS), taking turns. */
  async #interleave(
    targets: Targets,
    load: (target: Target, name: TargetName) => Promise<LoadResult>,
    rounds = Math.round(this.opts.durationS / WINDOW_S),
  ): Promise<Map<TargetName, Window[]>> {
    const windows = new Map<TargetName, Window[]>([...targets.keys()].map((n) => [n, []]));
    for (let i = 0; i < rounds; i++) {
      for (const name of turnOrder([...targets.keys()], i)) {
        const target = targets.get(name)!;
        windows.get(name)!.push(await this.measure(target, () => load(target, name)));
      }
    }
    return windows;
  }

  /** Runs (a)–(d) on every target; `log` hears about progress. */
  async run(log: (text: string) => void): Promise<Results> {
    const results: Results = {};
    for (const name of this.names()) results[name] = {};
    await this.mocks.setBehaviour({ delayMs: 0, jitterMs: 0 });
    log('phase 1 (mock delay 0): starting targets');
    let targets = await this.#startAll();
    const clients = new Map<TargetName, LoadClient>();
    try {
      for (const target of targets.values()) {
        await this.closedLoop(target.url, 50, this.opts.warmUpS);
      }
      log('(a) 50 connections');
      const a = await this.#interleave(
        targets,
        (t) => this.closedLoop(t.url, 50, WINDOW_S),
        this.opts.cpuWindows,
      );
      for (const [name, windows] of a) {
        const scenario = summarise(windows);
        scenario.peakRssBytes = peakRss(targets.get(name)!);
        results[name]!.throughput = scenario;
      }
      log('(b) 1 connection');
      const b = await this.#interleave(targets, (t, name) => this.#oneConnection(t, name, clients));
      for (const [name, windows] of b) results[name]!.oneConnection = summarise(windows);
      log(`(c) ${this.opts.rate} req/s open loop`);
      const fixed = new Map<TargetName, LoadClient>();
      for (const [name, target] of targets) {
        const client = new LoadClient(target.url, this.opts.body, FIXED_RATE_CONNECTIONS);
        fixed.set(name, client);
        // The target is warm already: this only opens the client's connections.
        await client.fixedRate(this.opts.rate, 1, false);
      }
      const c = await this.#interleave(targets, (_t, name) =>
        fixed.get(name)!.fixedRate(this.opts.rate, WINDOW_S),
      );
      for (const [name, windows] of c) results[name]!.fixedRate = summarise(windows);
      for (const client of fixed.values()) await client.close();
    } finally {
      for (const client of clients.values()) await client.close();
      await this.#stopAll(targets);
    }
    await this.mocks.setBehaviour({ delayMs: CROWD_DELAY_MS, jitterMs: 0 });
    log(`phase 2 (mock delay ${CROWD_DELAY_MS} ms): starting fresh targets`);
    targets = await this.#startAll();
    try {
      for (const target of targets.values()) {
        await this.closedLoop(target.url, 200, this.opts.crowdWarmUpS);
      }
      log('(d) 200 connections');
      // One window of the whole duration: each wrk run opens its 200 connections at once, and
      // in a 1 s window those first requests alone would be over 1% of the answers (the p99).
      const d = await this.#interleave(
        targets,
        (t) => this.closedLoop(t.url, 200, this.opts.durationS),
        1,
      );
      for (const [name, windows] of d) {
        const scenario = summarise(windows);
        scenario.peakRssBytes = peakRss(targets.get(name)!);
        results[name]!.crowd = scenario;
      }
    } finally {
      await this.#stopAll(targets);
    }
    return results;
  }

  /** (b) window: wrk with one connection, else a kept-open one-connection LoadClient. */
  #oneConnection(
    target: Target,
    name: TargetName,
    clients: Map<TargetName, LoadClient>,
  ): Promise<LoadResult> {
    if (this.#wrkScript) return this.closedLoop(target.url, 1, WINDOW_S);
    let client = clients.get(name);
    if (!client) {
      client = new LoadClient(target.url, this.opts.body, 1);
      clients.set(name, client);
    }
    return client.closedLoop(WINDOW_S);
  }
}
