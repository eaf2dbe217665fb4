import type Database from 'better-sqlite3';
import { keyRowMac, keyRowRefused, keysMarker } from '../audit-macs.ts';
import type { KeyRowFields } from '../audit-macs.ts';
import { auditKeyOf } from './audit-keying.ts';
import { prepared } from './statement-cache.ts';

// API key rows keyed with the audit key (ADR 0030 update): a role raised, a tenant changed, a revocation undone or a
// key put in behind the server's back (whoever can write the file, without the key) no longer authenticates, and
// `audit verify` names it (../keyed-audit-check.ts).

export type { KeyRowFields } from '../audit-macs.ts';

/** Writes the MAC of key `id` as its row is now, when this connection has the audit key. */
export function macKeyRow(db: Database.Database, id: string): void {
  const key = auditKeyOf(db);
  if (key === undefined) return;
  const row = prepared(db, 'SELECT * FROM api_keys WHERE id = ?').get(id) as KeyRowFields | undefined;
  if (row !== undefined)
    prepared(db, 'UPDATE api_keys SET mac = ? WHERE id = ?').run(keyRowMac(key, row), id);
}

/**
 * On a keyed connection's first open after the keys were given MACs (migration 18): every key row there is then
 * keyed once, in one IMMEDIATE transaction, and a signed marker says so. From then on a row without a valid MAC is
 * refused. A read-only file is left as it is (and not checked).
 */
export function keyApiKeys(db: Database.Database, key: Buffer): void {
  const marker = keysMarker(key);
  try {
    if (keysSig(db) !== marker) {
      db.transaction(() => {
        if (keysSig(db) !== null) return;
        const rows = db.prepare('SELECT * FROM api_keys WHERE mac IS NULL').all() as KeyRowFields[];
        const write = db.prepare('UPDATE api_keys SET mac = ? WHERE id = ?');
        for (const r of rows) write.run(keyRowMac(key, r), r.id);
        db.prepare('UPDATE audit_key SET keys_sig = ? WHERE id = 1').run(marker);
      }).immediate();
    }
  } catch (e) {
    if (String((e as { code?: unknown }).code).startsWith('SQLITE_READONLY')) return;
    throw e;
  }
  if (keysSig(db) === marker) checkedWith.set(db, key);
}

/** Connections that saw the keys keyed with their key: they check every key row from then on (no query each). */
const checkedWith = new WeakMap<Database.Database, Buffer>();

function keysSig(db: Database.Database): string | null {
  const row = prepared(db, 'SELECT keys_sig FROM audit_key WHERE id = 1').get() as
    { keys_sig: string | null } | undefined;
  return row?.keys_sig ?? null;
}

/** Whether this connection checks key rows: it has the audit key and the keys were keyed with it. */
function checking(db: Database.Database): Buffer | undefined {
  const known = checkedWith.get(db);
  if (known !== undefined) return known;
  // Keyed by another process since this connection opened (it could not write then).
  const key = auditKeyOf(db);
  if (key === undefined || keysSig(db) !== keysMarker(key)) return undefined;
  checkedWith.set(db, key);
  return key;
}

/** Refuses a key row that is not as the key wrote it (UNAUTHORIZED: it authenticates no one). */
export function assertKeyRow(db: Database.Database, row: KeyRowFields & { mac: string | null }): void {
  const key = checking(db);
  if (key === undefined || row.mac === keyRowMac(key, row)) return;
  throw keyRowRefused(row.id);
}
