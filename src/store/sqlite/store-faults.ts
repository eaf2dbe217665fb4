import type { StoreFault, StoreFaultKind } from '../../spec/index.ts';

/** SQLite's primary result codes (extended ones such as SQLITE_READONLY_DIRECTORY start with them) by kind. */
const KINDS: readonly (readonly [string, StoreFaultKind])[] = [
  ['SQLITE_FULL', 'disk_full'],
  ['SQLITE_READONLY', 'read_only'],
  ['SQLITE_PERM', 'read_only'],
  ['SQLITE_CANTOPEN', 'cannot_open'],
  ['SQLITE_IOERR', 'io_error'],
  ['SQLITE_BUSY', 'busy'],
  ['SQLITE_LOCKED', 'busy'],
  ['SQLITE_CORRUPT', 'corrupt'],
  ['SQLITE_NOTADB', 'corrupt'],
  ['SQLITE_NOMEM', 'out_of_memory'],
];

/** The fault kind of a SQLite error code, or null for errors that are not the store's health (a constraint). */
export function faultKind(sqliteCode: string): StoreFaultKind | null {
  for (const [prefix, kind] of KINDS) {
    if (sqliteCode === prefix || sqliteCode.startsWith(`${prefix}_`)) return kind;
  }
  return null;
}

/** The fault kind of anything the store threw (null when it is not a store fault). */
export function faultKindOf(error: unknown): StoreFaultKind | null {
  const code = sqliteCodeOf(error);
  return code === null ? null : faultKind(code);
}

/** The SQLite code of anything thrown by better-sqlite3 (or wrapped by toStoreError), if it has one. */
export function sqliteCodeOf(error: unknown): string | null {
  for (let e: unknown = error; e !== null && typeof e === 'object'; e = (e as { cause?: unknown }).cause) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('SQLITE_')) return code;
  }
  return null;
}

/** What the operator reads for each kind: what is wrong with the file at `path`, and what to do. */
export function faultMessage(kind: StoreFaultKind, path: string): string {
  switch (kind) {
    case 'disk_full':
      return `the disk holding ${path} is full: free space on it; tasks wait and resume by themselves`;
    case 'read_only':
      return `${path} is read-only to this process (the file, its -wal/-shm files or their directory are not writable by this user, or the disk is mounted read-only): make them writable (a running server reconnects by itself)`;
    case 'cannot_open':
      return `${path} or its -wal/-shm files cannot be opened: check that the path exists, that its directory is writable by this user and that the disk is mounted`;
    case 'io_error':
      return `reading or writing ${path} failed with an I/O error: check the disk (dmesg, its free space); tasks wait and resume once it answers`;
    case 'busy':
      return `${path} is locked by another connection past the busy timeout: look for a long transaction elsewhere (another process, a backup, a sqlite3 shell)`;
    case 'corrupt':
      return `${path} is damaged: stop the service, keep a copy of the file and restore it from a backup`;
    case 'out_of_memory':
      return `SQLite ran out of memory on ${path}: give the process more memory`;
  }
}

/** The fault a SQLite error is (null if it is not one), first seen at `now`. */
export function toStoreFault(error: unknown, path: string, now: number): StoreFault | null {
  const code = sqliteCodeOf(error);
  const kind = code === null ? null : faultKind(code);
  if (code === null || kind === null) return null;
  return { kind, code, message: faultMessage(kind, path), since: now };
}
