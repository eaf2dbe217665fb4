import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import os from 'node:os';

/**
 * CPU accounting from /proc (Linux), to tell how much of a system's run other work on the machine took:
 * the benchmark shares its 2 cores with whatever else runs there. Ticks are USER_HZ (100 per second).
 */
const TICKS_PER_SECOND = 100;

function read(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

export interface MachineTicks {
  /** user + nice + system + irq + softirq, all CPUs. */
  busy: number;
  /** Time the hypervisor gave this machine's CPUs to someone else. */
  steal: number;
}

export function machineTicks(): MachineTicks | null {
  const line = read('/proc/stat')?.split('\n')[0];
  if (!line?.startsWith('cpu ')) return null;
  const f = line.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = f;
  return { busy: user + nice + system + irq + softirq, steal };
}

/** This process's CPU ticks; with `children`, also those of the child processes it has waited for. */
export function processTicks(children: boolean): number | null {
  const stat = read('/proc/self/stat');
  if (!stat) return null;
  // Fields after the parenthesised command name; utime is field 14 of the whole line.
  const f = stat
    .slice(stat.lastIndexOf(')') + 2)
    .split(' ')
    .map(Number);
  const [utime = 0, stime = 0, cutime = 0, cstime = 0] = f.slice(11, 15);
  return utime + stime + (children ? cutime + cstime : 0);
}

export interface Interference {
  /** Share of the machine's CPU capacity used by processes other than the benchmark, during this system's run. */
  otherCpuShare: number;
  /** Share of the machine's CPU capacity the hypervisor stole. */
  stealShare: number;
}

export function interference(
  before: MachineTicks,
  after: MachineTicks,
  benchmarkTicks: number,
  wallMs: number,
): Interference {
  const capacity = (wallMs / 1000) * TICKS_PER_SECOND * os.availableParallelism();
  return {
    otherCpuShare: Math.max(0, after.busy - before.busy - benchmarkTicks) / capacity,
    stealShare: (after.steal - before.steal) / capacity,
  };
}

/** How busy the machine is over `ms` while the benchmark itself is idle; null off Linux. */
export async function busyShare(ms: number): Promise<number | null> {
  const before = machineTicks();
  await sleep(ms);
  const after = machineTicks();
  if (!before || !after) return null;
  return (after.busy - before.busy) / ((ms / 1000) * TICKS_PER_SECOND * os.availableParallelism());
}
