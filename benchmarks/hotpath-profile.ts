/**
 * The profile mode of the hot-path benchmark (`--profile DIR`): the reference, cascade and
 * (when the runner has it) keyed cascade run scenario (a) under --cpu-prof, and their self time
 * is summarised per module, side by side: reference vs cascade, and cascade vs keyed (what a
 * client key adds per request).
 */
import { mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import {
  compareProfiles,
  renderProfile,
  summariseProfileFile,
  type ProfileSummary,
  type ProfileWindow,
} from './hotpath-cpuprofile.js';
import { summarise, type Window } from './hotpath-results.js';
import type { HotpathRunner } from './hotpath-runner.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The targets under (a) with --cpu-prof (200 µs sampling); returns their summaries (Markdown). */
export async function profileHotpath(runner: HotpathRunner, dir: string): Promise<string> {
  mkdirSync(dir, { recursive: true });
  await runner.mocks.setBehaviour({ delayMs: 0, jitterMs: 0 });
  const profiles: { label: string; summary: ProfileSummary; requests: number }[] = [];
  let text = '';
  const names = runner.names().filter((name) => ['reference', 'cascade', 'keyed'].includes(name));
  for (const name of names) {
    const before = new Set(readdirSync(dir));
    const target = await runner.start(name, [
      '--cpu-prof',
      `--cpu-prof-dir=${dir}`,
      '--cpu-prof-interval=200',
    ]);
    let requests = 0;
    let measured: Window;
    let window: ProfileWindow;
    try {
      const fromMs = performance.now() - target.spawnedAt;
      requests += (await runner.closedLoop(target.url, 50, runner.opts.warmUpS)).requests;
      measured = await runner.measure(target, () =>
        runner.closedLoop(target.url, 50, runner.opts.durationS),
      );
      requests += measured.load.requests;
      window = { fromMs, toMs: performance.now() - target.spawnedAt };
    } finally {
      await target.stop();
    }
    await sleep(200);
    const written = readdirSync(dir).find((f) => f.endsWith('.cpuprofile') && !before.has(f));
    if (written === undefined) throw new Error(`no .cpuprofile was written to ${dir}`);
    const file = path.join(dir, written);
    // Only the load (warm-up + measurement) counts: start-up and shutdown are cut off.
    const summary = summariseProfileFile(file, 15, window);
    profiles.push({ label: name, summary, requests });
    const perRequest = summarise([measured]).cpuUsPerRequest?.median;
    text +=
      `\n## ${name} under (a): ${Math.round(measured.load.rps)} req/s, ` +
      `${perRequest?.toFixed(1)} µs CPU/request (profiler on)\n${file}\n\n` +
      `${renderProfile(summary)}\n`;
  }
  const keyed = profiles[2];
  return (
    `${text}\n## Self time per request by module, reference vs cascade\n\n` +
    `${compareProfiles(profiles[0]!, profiles[1]!)}\n` +
    (keyed === undefined
      ? ''
      : `\n## Self time per request by module, cascade vs keyed\n\n` +
        `${compareProfiles(profiles[1]!, keyed)}\n`)
  );
}
