import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CodecallError } from '../../errors/index.ts';
import { GroupCommit } from './group-commit.ts';

describe('GroupCommit', () => {
  let dir = '';
  let path = '';
  let db: Database.Database;
  let reader: Database.Database;
  let commits: GroupCommit;
  const rows = (on: Database.Database = reader): number[] =>
    (on.prepare('SELECT x FROM t ORDER BY x').all() as { x: number }[]).map((r) => r.x);
  const insert = (x: number): number => {
    db.prepare('INSERT INTO t (x) VALUES (?)').run(x);
    return x;
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'codecall-group-commit-'));
    path = join(dir, 'db.sqlite');
    db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec('CREATE TABLE t (x INTEGER NOT NULL)');
    reader = new Database(path, { readonly: true });
    commits = new GroupCommit(db);
  });
  afterEach(() => {
    reader.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('commits the writes of one event-loop turn in one transaction, resolving after the commit', async () => {
    const seen: { own: number; other: number; inTransaction: boolean }[] = [];
    const writes = [1, 2, 3].map((x) =>
      commits.enqueue(() => {
        insert(x);
        // Each write sees the earlier ones of its batch; another connection sees none of them yet.
        seen.push({ own: rows(db).length, other: rows().length, inTransaction: db.inTransaction });
        return x * 10;
      }),
    );
    expect(rows()).toEqual([]);
    expect(await Promise.all(writes)).toEqual([10, 20, 30]);
    expect(seen).toEqual([
      { own: 1, other: 0, inTransaction: true },
      { own: 2, other: 0, inTransaction: true },
      { own: 3, other: 0, inTransaction: true },
    ]);
    expect(rows()).toEqual([1, 2, 3]);
    expect(db.inTransaction).toBe(false);
  });

  it('undoes and rejects only the write that threw, including what it wrote before throwing', async () => {
    const results = await Promise.allSettled([
      commits.enqueue(() => insert(1)),
      commits.enqueue(() => {
        insert(2);
        throw new CodecallError('FENCED', 'stale');
      }),
      commits.enqueue(() => insert(3)),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ code: 'FENCED' });
    expect(rows()).toEqual([1, 3]);
  });

  it('rejects every write of the batch when the transaction itself is lost', async () => {
    const results = await Promise.allSettled([
      commits.enqueue(() => insert(1)),
      commits.enqueue(() => {
        insert(2);
        // As SQLite does on some errors (SQLITE_FULL, SQLITE_IOERR): the whole transaction is rolled back.
        db.exec('ROLLBACK');
        throw new Error('disk I/O error');
      }),
      commits.enqueue(() => insert(3)),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    for (const r of results) {
      expect((r as PromiseRejectedResult).reason).toMatchObject({
        code: 'STORE_ERROR',
        message: 'disk I/O error',
      });
    }
    expect(rows()).toEqual([]);
    expect(db.inTransaction).toBe(false);
    expect(await commits.enqueue(() => insert(4))).toBe(4);
    expect(rows()).toEqual([4]);
  });

  it('rejects the whole batch with a retryable STORE_ERROR when the write lock is held elsewhere', async () => {
    db.pragma('busy_timeout = 20');
    const other = new Database(path);
    other.exec('BEGIN IMMEDIATE');
    try {
      const results = await Promise.allSettled([
        commits.enqueue(() => insert(1)),
        commits.enqueue(() => insert(2)),
      ]);
      for (const r of results) {
        expect(r.status).toBe('rejected');
        expect((r as PromiseRejectedResult).reason).toMatchObject({
          code: 'STORE_ERROR',
          retryable: true,
          details: { sqliteCode: 'SQLITE_BUSY' },
        });
      }
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    expect(rows()).toEqual([]);
  });

  it('skips a write whose signal was aborted before the flush', async () => {
    const controller = new AbortController();
    let ran = false;
    const aborted = commits.enqueue(() => {
      ran = true;
      return insert(1);
    }, controller.signal);
    const kept = commits.enqueue(() => insert(2));
    controller.abort();
    await expect(aborted).rejects.toMatchObject({ code: 'ABORTED' });
    expect(await kept).toBe(2);
    expect(ran).toBe(false);
    expect(rows()).toEqual([2]);
  });

  it('flush() commits what is queued at once, and a later scheduled flush finds nothing to do', async () => {
    const write = commits.enqueue(() => insert(1));
    commits.flush();
    expect(rows()).toEqual([1]);
    expect(await write).toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(rows()).toEqual([1]);
  });

  it('takes writes queued while a flush is pending into the same batch, and later ones into the next', async () => {
    const committedBefore: number[] = [];
    const write = (x: number): Promise<number> =>
      commits.enqueue(() => {
        committedBefore.push(rows().length);
        return insert(x);
      });
    const first = write(1);
    await Promise.resolve(); // a microtask later: still before the flush
    const second = write(2);
    await Promise.all([first, second]);
    await write(3);
    // 1 and 2 shared a transaction (the other connection saw neither); 3 came after their commit.
    expect(committedBefore).toEqual([0, 0, 2]);
    expect(rows()).toEqual([1, 2, 3]);
  });
});
