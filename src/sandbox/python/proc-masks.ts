import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Host-wide figures in the sandbox's /proc that follow what other sandboxes and the host do: CPU times, forks
 * and the last pid (stat, loadavg), memory, disks, interrupts, file locks (with inode numbers), pressure (and
 * its triggers, which a write would set), open files and inodes, the idle time. Each is bound over with an
 * empty file. What stays visible, and why, is in ADR 0016's addendum of issue 15.
 */
const MASKED_PROC = [
  'stat',
  'loadavg',
  'uptime',
  'meminfo',
  'vmstat',
  'zoneinfo',
  'buddyinfo',
  'diskstats',
  'interrupts',
  'softirqs',
  'schedstat',
  'locks',
  'key-users',
  'swaps',
  'pressure/cpu',
  'pressure/io',
  'pressure/memory',
  'pressure/irq',
  'sys/fs/file-nr',
  'sys/fs/inode-nr',
  'sys/fs/dentry-state',
];

let present: readonly string[] | null = null;

/** The masked files this kernel has (bwrap cannot bind over a file /proc lacks). */
export function maskedProcFiles(): readonly string[] {
  present ??= MASKED_PROC.map((name) => `/proc/${name}`).filter((path) => existsSync(path));
  return present;
}

/** An empty file the sandbox's uid can read but nobody can write, in a directory of its own; `remove` deletes both. */
export function makeEmptyFile(): { path: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'codecall-empty-'));
  const path = join(dir, 'empty');
  writeFileSync(path, '');
  chmodSync(path, 0o444);
  chmodSync(dir, 0o755);
  return { path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
