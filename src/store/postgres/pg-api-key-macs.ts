import { keyRowMac, keyRowRefused, keysMarker } from '../audit-macs.ts';
import type { KeyRowFields } from '../audit-macs.ts';
import { all, one } from './pg-sql.ts';
import type { Sql } from './pg-sql.ts';

// API key rows keyed with the audit key (ADR 0030 update) on PostgreSQL, as on SQLite: a role raised, a tenant
// changed, a revocation undone or a key put in by whoever can write the database (without the key) authenticates
// no one, and `audit verify` names it.

/**
 * On a keyed store's open: the key rows written without a MAC (by an unkeyed store) are keyed once, and a signed
 * marker says so; from then on a row without a valid MAC is refused. The table is locked meanwhile, so two nodes
 * opening at once key the rows once. Call after `keySchema` (the marker lives in `audit_key`).
 */
export async function keyApiKeys(sql: Sql, key: Buffer): Promise<void> {
  const marker = keysMarker(key);
  if ((await keysSig(sql)) === marker) return;
  await sql.query('BEGIN');
  try {
    await sql.query('LOCK TABLE api_keys IN SHARE ROW EXCLUSIVE MODE');
    // A forged or foreign marker is left for `verify` to name (as on SQLite): keying over it would hide it.
    if ((await keysSig(sql)) === null) {
      const rows = await all<KeyRowFields>(sql, 'SELECT * FROM api_keys WHERE mac IS NULL');
      for (const r of rows)
        await sql.query('UPDATE api_keys SET mac = $1 WHERE id = $2', [keyRowMac(key, r), r.id]);
      await sql.query('UPDATE audit_key SET keys_sig = $1 WHERE id = 1', [marker]);
    }
    await sql.query('COMMIT');
  } catch (e) {
    await sql.query('ROLLBACK').catch(() => undefined);
    throw e;
  }
}

async function keysSig(sql: Sql): Promise<string | null> {
  return (
    (await one<{ keys_sig: string | null }>(sql, 'SELECT keys_sig FROM audit_key WHERE id = 1'))?.keys_sig ??
    null
  );
}

/** The `keys_sig` column beside a looked-up key row (one statement: no extra round trip per request). */
export const KEYS_SIG_COLUMN = '(SELECT keys_sig FROM audit_key WHERE id = 1) AS keys_sig';

/**
 * Checks looked-up key rows once the keys were keyed with this key (seen by this store, at open or since: another
 * node may have keyed them later). Once seen, rows are checked for the store's life, as on SQLite.
 */
export class KeyRowCheck {
  readonly #key: Buffer | undefined;
  #checking = false;

  constructor(key: Buffer | undefined) {
    this.#key = key;
  }

  /** Refuses a key row that is not as the key wrote it (UNAUTHORIZED: it authenticates no one). */
  assert(row: KeyRowFields & { mac: string | null; keys_sig: string | null }): void {
    const key = this.#key;
    if (key === undefined) return;
    this.#checking ||= row.keys_sig === keysMarker(key);
    if (this.#checking && row.mac !== keyRowMac(key, row)) throw keyRowRefused(row.id);
  }
}
