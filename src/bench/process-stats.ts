/**
 * What the benches read about processes and CPUs from /proc (Linux): a process's CPU time
 * (utime + stime of every thread, /proc/<pid>/stat), its peak and current resident set
 * (VmHWM, VmRSS from /proc/<pid>/status), its children, and how busy a CPU or the whole
 * machine was (/proc/stat). Every reading is undefined where /proc is missing.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

/** A reading of one process (or the sum over several). */
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

/** The fields of /proc/<pid>/stat text after the `(name)` one, which may contain spaces. */
function statFields(stat: string): string[] {
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** utime + stime in ticks from the text of /proc/<pid>/stat. */
export function cpuTicksOf(stat: string): number {
  const fields = statFields(stat);
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

/** The sum of the readings of `pids` (nginx: master + worker); undefined when one is unreadable. */
export function readProcesses(pids: readonly number[]): ProcessReading | undefined {
  let cpuMicros = 0;
  let peakRssKiB = 0;
  let rssKiB = 0;
  for (const pid of pids) {
    const reading = readProcess(pid);
    if (reading === undefined) return undefined;
    cpuMicros += reading.cpuMicros;
    peakRssKiB += reading.peakRssKiB;
    rssKiB += reading.rssKiB;
  }
  return { cpuMicros, peakRssKiB, rssKiB };
}

/** The pids whose parent is `pid`. */
export function childrenOf(pid: number): number[] {
  const children: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return children;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const parent = statFields(readFileSync(`/proc/${entry}/stat`, 'utf8'))[1];
      if (parent === String(pid)) children.push(Number(entry));
    } catch {
      // The process ended between readdir and read.
    }
  }
  return children;
}

/**
 * Busy ticks of a `cpu…` line of /proc/stat: everything but idle and iowait. Steal counts: it
 * is time the CPU was taken from this machine (a busy neighbour on the host), which skews a
 * measurement as much as a busy process here does. guest and guest_nice are left out because
 * user and nice already include them.
 */
export function busyTicksOf(line: string): number {
  // cpu user nice system idle iowait irq softirq steal guest guest_nice
  const [user, nice, system, , , irq, softirq, steal] = line
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  return (user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0);
}

/**
 * Busy CPU time since boot, µs, of one CPU (`cpu` = its number) or of the whole machine
 * (`cpu` omitted); see busyTicksOf. Undefined without /proc/stat.
 */
export function readCpuBusy(cpu?: number): number | undefined {
  const prefix = cpu === undefined ? 'cpu ' : `cpu${cpu} `;
  try {
    const line = readFileSync('/proc/stat', 'utf8')
      .split('\n')
      .find((row) => row.startsWith(prefix));
    if (line === undefined) return undefined;
    const busy = busyTicksOf(line);
    return Number.isFinite(busy) ? (busy * 1_000_000) / clockTicks() : undefined;
  } catch {
    return undefined;
  }
}
