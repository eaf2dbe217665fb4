import { describe, expect, it } from 'vitest';
import { toStoreError } from './sqlite-errors.ts';
import { faultKind, toStoreFault } from './store-faults.ts';

const sqliteError = (code: string): Error => Object.assign(new Error(`sqlite says ${code}`), { code });

describe('store faults', () => {
  it.each([
    ['SQLITE_FULL', 'disk_full'],
    ['SQLITE_READONLY', 'read_only'],
    ['SQLITE_READONLY_DIRECTORY', 'read_only'],
    ['SQLITE_READONLY_DBMOVED', 'read_only'],
    ['SQLITE_PERM', 'read_only'],
    ['SQLITE_CANTOPEN', 'cannot_open'],
    ['SQLITE_CANTOPEN_ISDIR', 'cannot_open'],
    ['SQLITE_IOERR', 'io_error'],
    ['SQLITE_IOERR_WRITE', 'io_error'],
    ['SQLITE_IOERR_FSYNC', 'io_error'],
    ['SQLITE_BUSY', 'busy'],
    ['SQLITE_BUSY_SNAPSHOT', 'busy'],
    ['SQLITE_LOCKED', 'busy'],
    ['SQLITE_CORRUPT', 'corrupt'],
    ['SQLITE_NOTADB', 'corrupt'],
    ['SQLITE_NOMEM', 'out_of_memory'],
  ])('%s is %s', (code, kind) => {
    expect(faultKind(code)).toBe(kind);
  });

  it.each(['SQLITE_CONSTRAINT_PRIMARYKEY', 'SQLITE_ERROR', 'SQLITE_MISMATCH', 'SQLITE_FULLNESS', 'SQLITE_'])(
    '%s is no fault of the store (the caller or a bug)',
    (code) => {
      expect(faultKind(code)).toBeNull();
    },
  );

  it('finds the SQLite code under the STORE_ERROR the store rejects with, and says what to do', () => {
    const fault = toStoreFault(toStoreError(sqliteError('SQLITE_FULL')), '/data/tasks.db', 5);
    expect(fault).toMatchObject({ kind: 'disk_full', code: 'SQLITE_FULL', since: 5 });
    expect(fault?.message).toContain('the disk holding /data/tasks.db is full: free space');
    expect(toStoreFault(new Error('not sqlite'), '/data/tasks.db', 5)).toBeNull();
  });
});
