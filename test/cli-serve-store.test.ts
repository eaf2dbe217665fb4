import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSqliteTaskStore } from '../src/store/index.ts';
import { assertBuilt, startCodecall, until } from './cli-fixture.ts';
import { crashWhileOpen, mountSmallDisk, smallDiskUnavailable } from './store/small-disk.ts';

// `codecall serve` on a database it cannot write (a real read-only filesystem) refuses to start: a clear error
// with a stable code, a non-zero exit, and never a "serving on" line. Both ways SQLite meets such a file: with
// the -wal/-shm files a crash left it opens it read-only; without them it cannot open it.

const skipped = smallDiskUnavailable === null ? '' : ` (skipped: ${smallDiskUnavailable})`;

describe.skipIf(smallDiskUnavailable !== null)(`codecall serve on a read-only database${skipped}`, () => {
  for (const crashed of [true, false]) {
    it(`exits non-zero with STORE_UNAVAILABLE and what to do, never saying it serves (${crashed ? 'after a crash' : 'closed cleanly'})`, async () => {
      assertBuilt();
      const disk = mountSmallDisk(4 << 20);
      try {
        const db = join(disk.dir, 'tasks.db');
        await (await createSqliteTaskStore({ path: db })).close();
        if (crashed) crashWhileOpen(db);
        disk.readOnly();
        const serve = startCodecall({}, 'serve', '--port', '0', '--db', db, '--insecure-no-auth');
        let code: number | null | undefined;
        void serve.exited.then((c) => (code = c));
        await until(() => code !== undefined || serve.stderr().includes('serving on'));
        if (code === undefined) serve.child.kill('SIGKILL');
        expect(serve.stderr()).not.toContain('serving on');
        expect(code).not.toBe(0);
        expect(serve.stderr()).toContain('error STORE_UNAVAILABLE: ');
        expect(serve.stderr()).toContain(db);
      } finally {
        await disk.unmount();
      }
    });
  }
});
