import { chmodSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

/**
 * Host-wide figures in the sandbox's /proc that follow closely what other sandboxes and the host do: CPU times
 * and forks since boot (stat), the last pid (loadavg), memory and paging (meminfo, vmstat), disk I/O, interrupts,
 * the host's file locks (with inode numbers), pressure (whose writes would set triggers). Each is bound over with
 * an empty file; each bind costs a sandbox's start about 70 µs, so the slower or coarser figures stay (ADR 0016's
 * addendum of issue 15 lists them, and why).
 */
const MASKED_PROC = [
  'stat',
  'loadavg',
  'meminfo',
  'vmstat',
  'diskstats',
  'interrupts',
  'locks',
  'pressure/cpu',
  'pressure/io',
  'pressure/memory',
];

let present: readonly string[] | null = null;

/** The masked files this kernel has (bwrap cannot bind over a file /proc lacks). */
export function maskedProcFiles(): readonly string[] {
  present ??= MASKED_PROC.map((name) => `/proc/${name}`).filter((path) => existsSync(path));
  return present;
}

/** Whether every directory from `dir` up to / lets others through (the sandbox's uid is an other). */
export function traversableByOthers(dir: string): boolean {
  for (let d = resolve(dir); ; d = dirname(d)) {
    try {
      if ((statSync(d).mode & 0o001) === 0) return false;
    } catch {
      return false;
    }
    if (dirname(d) === d) return true;
  }
}

/**
 * Where host files bound into the sandbox are made: the temp directory when the sandbox's uid can reach it, else a
 * world-reachable one (a TMPDIR under a 0700 home made bwrap fail every start: "Can't find source path").
 */
export function sandboxReachableTmpdir(): string {
  const candidates = [tmpdir(), '/dev/shm', '/tmp'];
  return candidates.find((d) => existsSync(d) && traversableByOthers(d)) ?? tmpdir();
}

/** An empty file the sandbox's uid can read but nobody can write, in a directory of its own; `remove` deletes both. */
export function makeEmptyFile(): { path: string; remove: () => void } {
  const dir = mkdtempSync(join(sandboxReachableTmpdir(), 'codecall-empty-'));
  const path = join(dir, 'empty');
  writeFileSync(path, '');
  chmodSync(path, 0o444);
  chmodSync(dir, 0o755);
  return { path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
