/**
 * examples/systemd/cascade.service: the promises of its README read from the unit, then
 * `systemd-analyze verify` (syntax, directives, executables) and `systemd-analyze security`
 * (the hardening score) where systemd is installed; skipped, saying why, where it is not.
 * Starting the unit needs a machine whose init is systemd, which this one is not.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI_PATH, REPO_ROOT } from '../helpers/run-cli.js';
import { makeTempDir, type TempDir } from '../helpers/temp-dir.js';
import { onPath } from '../support/on-path.js';

const UNIT_PATH = path.join(REPO_ROOT, 'examples/systemd/cascade.service');
const unitText = readFileSync(UNIT_PATH, 'utf8');

/** `Key=value` lines of one [Section], every value of a repeated key kept in order. */
function section(name: string): Map<string, string[]> {
  const keys = new Map<string, string[]>();
  let current = '';
  for (const raw of unitText.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      current = header[1]!;
      continue;
    }
    if (current !== name) continue;
    const eq = line.indexOf('=');
    keys.set(line.slice(0, eq), [...(keys.get(line.slice(0, eq)) ?? []), line.slice(eq + 1)]);
  }
  return keys;
}
const service = section('Service');
const one = (key: string): string | undefined => service.get(key)?.at(-1);

let temp: TempDir | undefined;
afterEach(() => temp?.cleanup());

describe('examples/systemd/cascade.service', () => {
  it('runs `cascade serve` as a dynamic user with usage in its state directory', () => {
    expect(one('DynamicUser')).toBe('yes');
    const state = one('StateDirectory');
    expect(state).toBe('cascade');
    expect(one('WorkingDirectory')).toBe(`/var/lib/${state}`);
    const exec = one('ExecStart')!.split(/\s+/);
    expect(exec[0]).toMatch(/^\/.*\/cascade$/);
    expect(exec[1]).toBe('serve');
    expect(exec[exec.indexOf('--quotas') + 1]).toBe(`/var/lib/${state}/quotas.json`);
    expect(service.get('Environment')).toContain('CONFIG_PATH=/etc/cascade/config.toml');
    expect(one('ConfigurationDirectory')).toBe('cascade');
  });

  it('reloads on SIGHUP, restarts on failure, and waits longer than the drain to stop', () => {
    expect(one('ExecReload')).toBe('/bin/kill -HUP $MAINPID');
    expect(one('Restart')).toBe('on-failure');
    expect(one('KillSignal')).toBe('SIGTERM');
    expect(Number(one('TimeoutStopSec'))).toBeGreaterThan(10);
  });

  it('is hardened: strict read-only system, no capabilities, no new privileges', () => {
    expect(one('ProtectSystem')).toBe('strict');
    expect(one('NoNewPrivileges')).toBe('yes');
    expect(one('CapabilityBoundingSet')).toBe('');
    expect(one('MemoryDenyWriteExecute'), "V8's JIT needs it off").toBeUndefined();
  });
});

const ANALYZE = onPath('systemd-analyze');
const NOTE = ANALYZE
  ? ''
  : ' (skipped: systemd-analyze not on PATH — apt-get install systemd; .ci/run does)';

describe.skipIf(!ANALYZE)(`systemd-analyze on cascade.service${NOTE}`, () => {
  /**
   * verify also checks that ExecStart's program exists, and this machine has no global
   * `cascade`: the copy checked here points ExecStart at a launcher of the built CLI. Nothing
   * else in the unit is changed.
   */
  function unitWithLocalCascade(): string {
    temp = makeTempDir('cascade-systemd-');
    const launcher = temp.path('cascade');
    temp.write({
      cascade: `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI_PATH)} "$@"\n`,
    });
    chmodSync(launcher, 0o755);
    const installed = one('ExecStart')!.split(/\s+/)[0]!;
    temp.write({ 'cascade.service': unitText.replaceAll(installed, launcher) });
    return temp.path('cascade.service');
  }

  function analyze(args: string[]) {
    return spawnSync(ANALYZE!, args, { encoding: 'utf8', timeout: 15_000 });
  }

  it('verify finds nothing to report', () => {
    const result = analyze(['verify', unitWithLocalCascade()]);
    expect(`${result.stdout}${result.stderr}`).toBe('');
    expect(result.status).toBe(0);
  });

  it('security rates its exposure OK (below 2.0 of 10)', () => {
    const result = analyze(['security', '--offline=true', '--no-pager', unitWithLocalCascade()]);
    const score = /Overall exposure level for cascade\.service: ([\d.]+)/.exec(result.stdout);
    expect(score, result.stdout + result.stderr).not.toBeNull();
    expect(Number(score![1])).toBeLessThan(2);
    const readme = readFileSync(path.join(REPO_ROOT, 'examples/systemd/README.md'), 'utf8');
    expect(readme).toContain(`rates it ${score![1]}`);
  });
});
