// A real small filesystem for store fault tests: a tmpfs of a few MiB that a test fills (disk full) or remounts
// read-only. Mounting needs root; `smallDiskUnavailable` says why not when it cannot.
import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface SmallDisk {
  readonly dir: string;
  /** Writes zeros into a file of its own until the disk has no byte left. */
  fill(): void;
  /** Removes that file. */
  free(): void;
  readOnly(): void;
  writable(): void;
  unmount(): Promise<void>;
}

function mount(dir: string, bytes: number): void {
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, 'tmpfs', dir], { stdio: 'pipe' });
}

/** Why no small disk can be mounted here (null when it can). */
export const smallDiskUnavailable: string | null = (() => {
  if (process.getuid?.() !== 0) return 'mounting a tmpfs needs root';
  const dir = mkdtempSync(join(tmpdir(), 'codecall-disk-probe-'));
  try {
    mount(dir, 1 << 20);
    execFileSync('umount', [dir], { stdio: 'pipe' });
    return null;
  } catch (e) {
    return `cannot mount a tmpfs: ${(e as Error).message.split('\n')[0] ?? ''}`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
})();

export function mountSmallDisk(bytes = 4 << 20): SmallDisk {
  const dir = mkdtempSync(join(tmpdir(), 'codecall-disk-'));
  mount(dir, bytes);
  const filler = join(dir, 'filler');
  const remount = (mode: 'ro' | 'rw'): void => {
    execFileSync('mount', ['-o', `remount,${mode}`, dir], { stdio: 'pipe' });
  };
  return {
    dir,
    fill() {
      const fd = openSync(filler, 'a');
      try {
        // Big blocks first, then ever smaller ones, down to a byte: not a page is left.
        for (let size = 1 << 16; size >= 1; size >>= 1) {
          const zeros = Buffer.alloc(size);
          for (;;) {
            try {
              writeSync(fd, zeros);
            } catch (e) {
              if ((e as NodeJS.ErrnoException).code === 'ENOSPC') break;
              throw e;
            }
          }
        }
      } finally {
        closeSync(fd);
      }
    },
    free() {
      rmSync(filler, { force: true });
    },
    readOnly: () => remount('ro'),
    writable: () => remount('rw'),
    async unmount() {
      execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
      await rm(dir, { recursive: true, force: true });
    },
  };
}

const root = new URL('../..', import.meta.url).pathname;

/**
 * Opens the database file in another process, commits, and dies by SIGKILL, as a crashed server does: its -wal
 * and -shm files stay behind (so SQLite can later open the file read-only on a read-only disk).
 */
export function crashWhileOpen(path: string): void {
  const script = `
    const Database = require('better-sqlite3');
    const db = new Database(process.argv[1]);
    db.pragma('wal_autocheckpoint = 0');
    db.pragma('user_version = 1');
    process.kill(process.pid, 'SIGKILL');
  `;
  const r = spawnSync(process.execPath, ['-e', script, path], { cwd: root });
  if (r.signal !== 'SIGKILL') throw new Error(`the crashing process ended otherwise: ${r.stderr.toString()}`);
}
