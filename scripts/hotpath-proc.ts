/**
 * What the hot-path benchmark reads about a process from /proc (Linux): CPU time (utime +
 * stime, every thread, in clock ticks of `getconf CLK_TCK`), the peak resident set (VmHWM —
 * process-lifetime, so each proxy is started fresh for a scenario that reports it) and the
 * children of a process (nginx's worker). Off Linux every reading is undefined.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { clockTicks, readProcess } from '../src/bench/process-stats.js';

/** Clock ticks per second of /proc/<pid>/stat times. */
export const CLK_TCK = clockTicks();

/** The fields of /proc/<pid>/stat after the `(comm)` one, which may contain spaces. */
function statFields(pid: number): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** CPU seconds (user + system) a process has used so far. */
export function cpuSeconds(pid: number): number | undefined {
  const reading = readProcess(pid);
  return reading && reading.cpuMicros / 1e6;
}

/** Peak resident set (VmHWM) of a process in bytes. */
export function peakRssBytes(pid: number): number | undefined {
  const reading = readProcess(pid);
  return reading && reading.peakRssKiB * 1024;
}

/** The sum of `read` over pids; undefined when any is unreadable. */
function sumOver(pids: readonly number[], read: (pid: number) => number | undefined) {
  let total = 0;
  for (const pid of pids) {
    const value = read(pid);
    if (value === undefined) return undefined;
    total += value;
  }
  return total;
}

/** Sum of cpuSeconds over pids; undefined when any is unreadable. */
export const cpuSecondsOf = (pids: readonly number[]) => sumOver(pids, cpuSeconds);

/** Sum of peakRssBytes over pids; undefined when any is unreadable. */
export const peakRssOf = (pids: readonly number[]) => sumOver(pids, peakRssBytes);

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
    if (statFields(Number(entry))?.[1] === String(pid)) children.push(Number(entry));
  }
  return children;
}

/** Busy seconds (all but idle and iowait) of one CPU since boot, from /proc/stat. */
export function cpuBusySeconds(cpu: number): number | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8')
      .split('\n')
      .find((row) => row.startsWith(`cpu${cpu} `));
    if (!line) return undefined;
    const [user, nice, system, , , irq, softirq, steal] = line
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    return (user! + nice! + system! + irq! + softirq! + (steal ?? 0)) / CLK_TCK;
  } catch {
    return undefined;
  }
}
