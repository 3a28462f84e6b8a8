/**
 * CPU time and peak memory of another process from /proc (Linux): utime + stime from
 * /proc/<pid>/stat, VmHWM (peak resident set) from /proc/<pid>/status. Undefined elsewhere.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** A reading of one process. */
export interface ProcessReading {
  /** User + system CPU time so far, microseconds. */
  readonly cpuMicros: number;
  /** Peak resident set size so far, KiB. */
  readonly peakRssKiB: number;
  /** Current resident set size, KiB. */
  readonly rssKiB: number;
}

let ticksPerSecond: number | undefined;

/** Clock ticks per second of /proc's CPU times (getconf CLK_TCK; 100 on Linux in practice). */
export function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond =
        Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** utime + stime in ticks from the text of /proc/<pid>/stat (the name may contain spaces). */
export function cpuTicksOf(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the name: state is field 3, so utime (14) and stime (15) sit at 11 and 12 here.
  return Number(fields[11]) + Number(fields[12]);
}

/** A `Vm…:   1234 kB` field of /proc/<pid>/status, in KiB. */
export function statusKiB(status: string, field: string): number {
  const match = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(status);
  return match ? Number(match[1]) : 0;
}

/** Reads `pid`'s CPU time and memory, or undefined without /proc (or when it has exited). */
export function readProcess(pid: number): ProcessReading | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return {
      cpuMicros: (cpuTicksOf(stat) * 1_000_000) / clockTicks(),
      peakRssKiB: statusKiB(status, 'VmHWM'),
      rssKiB: statusKiB(status, 'VmRSS'),
    };
  } catch {
    return undefined;
  }
}

/**
 * Busy CPU time of the whole machine so far (/proc/stat: user, nice, system, irq, softirq), µs;
 * undefined elsewhere. irq/softirq count because a process's stime can include them.
 */
export function readMachineCpu(): number | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
    const f = line.trim().split(/\s+/).map(Number);
    // cpu user nice system idle iowait irq softirq …
    const busy = (f[1] ?? 0) + (f[2] ?? 0) + (f[3] ?? 0) + (f[6] ?? 0) + (f[7] ?? 0);
    return Number.isFinite(busy) && line.startsWith('cpu ')
      ? (busy * 1_000_000) / clockTicks()
      : undefined;
  } catch {
    return undefined;
  }
}
