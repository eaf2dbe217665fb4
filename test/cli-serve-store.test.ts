import { spawn } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createSqliteTaskStore } from '../src/store/index.ts';
import { assertBuilt, bin, root, until } from './cli-fixture.ts';
import { crashWhileOpen, mountSmallDisk, smallDiskUnavailable } from './store/small-disk.ts';

// `codecall serve` on a database it cannot write refuses to start: a clear error with a stable code, a non-zero
// exit, and never a "serving on" line. Each way a file is read-only to the server: a read-only disk with the
// -wal/-shm files a crash left (SQLite opens it read-only), one closed cleanly (SQLite cannot open it), and files
// that belong to another user (`codecall keys create` run as root, the server as a service user).

const NOBODY = 65534;

/** Runs `codecall serve` until it exits or says it serves (then kills it); its exit code and stderr. */
async function serve(db: string, uid?: number): Promise<{ code: number | null | undefined; stderr: string }> {
  const args = [bin, 'serve', '--port', '0', '--db', db, '--insecure-no-auth'];
  const child = spawn(process.execPath, args, { cwd: root, ...(uid === undefined ? {} : { uid, gid: uid }) });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  let code: number | null | undefined;
  const exited = new Promise<void>((resolve) =>
    child.on('exit', (c) => {
      code = c;
      resolve();
    }),
  );
  await until(() => code !== undefined || stderr.includes('serving on'));
  if (code === undefined) child.kill('SIGKILL');
  await exited;
  return { code, stderr };
}

const skipped = smallDiskUnavailable === null ? '' : ` (skipped: ${smallDiskUnavailable})`;

describe.skipIf(smallDiskUnavailable !== null)(`codecall serve on a read-only database${skipped}`, () => {
  for (const crashed of [true, false]) {
    it(`exits non-zero with STORE_UNAVAILABLE, never saying it serves (a read-only disk, ${crashed ? 'after a crash' : 'closed cleanly'})`, async () => {
      assertBuilt();
      const disk = mountSmallDisk(4 << 20);
      onTestFinished(() => disk.unmount());
      const db = join(disk.dir, 'tasks.db');
      await (await createSqliteTaskStore({ path: db })).close();
      if (crashed) crashWhileOpen(db);
      disk.readOnly();
      const run = await serve(db);
      expect(run.stderr).not.toContain('serving on');
      expect(run.code).not.toBe(0);
      expect(run.stderr).toContain('error STORE_UNAVAILABLE: ');
      expect(run.stderr).toContain(db);
    });
  }

  it('exits non-zero with STORE_UNAVAILABLE (read_only) when the files belong to another user', async () => {
    assertBuilt();
    const dir = await mkdtemp(join(tmpdir(), 'codecall-owned-'));
    try {
      await chmod(dir, 0o755);
      const db = join(dir, 'tasks.db');
      await (await createSqliteTaskStore({ path: db })).close();
      crashWhileOpen(db);
      const run = await serve(db, NOBODY);
      expect(run.stderr).not.toContain('serving on');
      expect(run.code).not.toBe(0);
      expect(run.stderr).toContain('error STORE_UNAVAILABLE: refusing to serve: ');
      expect(run.stderr).toContain('is read-only to this process');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
