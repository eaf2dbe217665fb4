import type { StoreFault, StoreFaultKind } from '../../spec/index.ts';
import { sqlStateOf } from './pg-errors.ts';

/** SQLSTATEs (exact, or a class prefix) by fault kind; the first match wins. */
const STATES: readonly (readonly [string, StoreFaultKind])[] = [
  ['25006', 'read_only'], // read_only_sql_transaction: a hot standby, or default_transaction_read_only
  ['42501', 'read_only'], // insufficient_privilege: the role may not write the store's tables
  ['53100', 'disk_full'],
  ['53200', 'out_of_memory'],
  ['53300', 'cannot_open'], // too_many_connections
  ['58030', 'io_error'],
  ['55P03', 'busy'], // lock_not_available (lock_timeout)
  ['57014', 'busy'], // query_canceled (statement_timeout)
  ['57P', 'cannot_open'], // the server shutting down, crashed or still starting
  ['XX001', 'corrupt'],
  ['XX002', 'corrupt'],
  ['08', 'cannot_open'], // connection exceptions
  ['28', 'cannot_open'], // authentication
  ['3D000', 'cannot_open'], // no such database
];

/** Socket errors of a server that cannot be reached. */
const NETWORK = /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EPIPE)$/;

/** What the client says, without a code, of a connection that was lost or could not be made in time. */
const LOST = /Connection terminated|timeout expired|connection error and is not queryable/i;

/** pg-pool's answer when every connection stayed checked out past the connect timeout: a busy store. */
const POOL_TIMEOUT = /timeout exceeded when trying to connect/i;

/** The fault kind and driver code of anything the store threw (null when it is not the store's health). */
export function pgFaultOf(error: unknown): { kind: StoreFaultKind; code: string } | null {
  const state = sqlStateOf(error);
  const match = state === null ? undefined : STATES.find(([prefix]) => state.startsWith(prefix));
  if (state !== null && match !== undefined) return { kind: match[1], code: state };
  for (let e: unknown = error; e !== null && typeof e === 'object'; e = (e as { cause?: unknown }).cause) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK.test(code)) return { kind: 'cannot_open', code };
    if (e instanceof Error && LOST.test(e.message)) return { kind: 'cannot_open', code: 'CONNECTION_LOST' };
    if (e instanceof Error && POOL_TIMEOUT.test(e.message)) return { kind: 'busy', code: 'POOL_TIMEOUT' };
  }
  return null;
}

/** What the operator reads for each kind: what is wrong with the server at `server` (no password), what to do. */
export function pgFaultMessage(kind: StoreFaultKind, server: string): string {
  switch (kind) {
    case 'disk_full':
      return `the disk of the PostgreSQL server ${server} is full: free space in its data directory (pg_wal included); tasks wait and resume by themselves`;
    case 'read_only':
      return `the PostgreSQL server ${server} refuses writes: it is a hot standby (point the URL at the primary), default_transaction_read_only is on for the database or role, or the role lacks write privileges on the store's tables; fix that (a running server reconnects by itself)`;
    case 'cannot_open':
      return `cannot connect to the PostgreSQL server ${server}: check that it runs, that it accepts connections from this host (listen_addresses, pg_hba.conf), the user, password and database, and max_connections; tasks wait and resume once it answers`;
    case 'io_error':
      return `the PostgreSQL server ${server} met an I/O error reading or writing its files: check its disk (its log, dmesg); tasks wait and resume once it answers`;
    case 'busy':
      return `a statement on the PostgreSQL server ${server} waited past its lock or statement timeout, or every pooled connection stayed busy past the connect timeout: look for long transactions or locks there (pg_stat_activity, pg_locks), or give the pool more connections`;
    case 'corrupt':
      return `the PostgreSQL server ${server} reports damaged data or index pages: stop the service, read the server's log, and restore from a backup (REINDEX for a damaged index)`;
    case 'out_of_memory':
      return `the PostgreSQL server ${server} ran out of memory: give it more memory, or lower work_mem or max_connections`;
  }
}

/** The fault a PostgreSQL or connection error is (null if it is not one), first seen at `now`. */
export function toPgStoreFault(error: unknown, server: string, now: number): StoreFault | null {
  const found = pgFaultOf(error);
  if (found === null) return null;
  return { ...found, message: pgFaultMessage(found.kind, server), since: now };
}
