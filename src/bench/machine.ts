/** The machine a bench ran on, written into every result file. */
import os from 'node:os';

/** What the figures depend on besides the code. */
export interface MachineInfo {
  readonly node: string;
  readonly platform: string;
  readonly release: string;
  readonly arch: string;
  readonly cpuModel: string;
  /** Logical CPUs this process may use (`nproc`). */
  readonly cpus: number;
  readonly totalMemoryMiB: number;
  readonly hostname: string;
}

/** Describes this machine. */
export function describeMachine(): MachineInfo {
  const cpus = os.cpus();
  return {
    node: process.version,
    platform: os.platform(),
    release: os.release(),
    arch: os.arch(),
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    cpus: os.availableParallelism(),
    totalMemoryMiB: Math.round(os.totalmem() / 1024 / 1024),
    hostname: os.hostname(),
  };
}

/** One line for tables and Markdown: `AMD EPYC, 2 CPUs, Node v20.20.2, linux x64`. */
export function machineLine(machine: MachineInfo): string {
  const cpus = `${machine.cpus} CPU${machine.cpus === 1 ? '' : 's'}`;
  return `${machine.cpuModel}, ${cpus}, ${machine.totalMemoryMiB.toLocaleString('en-US')} MiB RAM, Node ${machine.node}, ${machine.platform} ${machine.arch}`;
}
