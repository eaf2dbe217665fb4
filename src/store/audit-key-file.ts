import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { CodecallError } from '../errors/index.ts';

export interface AuditKeyOptions {
  readonly db: string;
  /** The key itself (else CODECALL_AUDIT_KEY). */
  readonly key?: string;
  /** A file holding the key (else CODECALL_AUDIT_KEY_FILE, else `<db>.audit-key`). */
  readonly keyFile?: string;
}

/** Where the key is looked for when none is given: beside the database, never inside it. */
export function defaultKeyFile(db: string): string {
  return `${db}.audit-key`;
}

/**
 * The audit HMAC key (ADR 0025, 0030), kept outside the database. `create` (serve, writing commands, anchoring)
 * makes a random key in the key file (0600) when there is none and says so on `note`; verifying never invents one.
 */
export async function resolveAuditKey(
  options: AuditKeyOptions & { create: boolean; note?: (text: string) => void },
): Promise<Buffer | null> {
  const inline = options.key ?? process.env.CODECALL_AUDIT_KEY;
  if (inline !== undefined && inline !== '') return Buffer.from(inline, 'utf8');
  const given = options.keyFile ?? process.env.CODECALL_AUDIT_KEY_FILE;
  const file = given ?? defaultKeyFile(options.db);
  if (existsSync(file)) return Buffer.from((await readFile(file, 'utf8')).trim(), 'utf8');
  if (!options.create) {
    if (given !== undefined) throw new CodecallError('NOT_FOUND', `no audit key file at ${file}`);
    return null;
  }
  try {
    await writeFile(file, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    await chmod(file, 0o600);
    options.note?.(
      `created audit key ${file} (0600); keep it: the audit chain and anchors verify only with it\n`,
    );
  } catch (e) {
    // Another process made it first: use theirs.
    if ((e as { code?: unknown }).code !== 'EEXIST') throw e;
  }
  return Buffer.from((await readFile(file, 'utf8')).trim(), 'utf8');
}

/**
 * The key for a database with no file beside it (PostgreSQL): `key` or CODECALL_AUDIT_KEY, else the file `keyFile`
 * or CODECALL_AUDIT_KEY_FILE; null when none is given. Never creates one.
 */
export async function resolveGivenAuditKey(options: {
  key?: string;
  keyFile?: string;
}): Promise<Buffer | null> {
  const inline = options.key ?? process.env.CODECALL_AUDIT_KEY;
  if (inline !== undefined && inline !== '') return Buffer.from(inline, 'utf8');
  const file = options.keyFile ?? process.env.CODECALL_AUDIT_KEY_FILE;
  if (file === undefined || file === '') return null;
  if (!existsSync(file)) throw new CodecallError('NOT_FOUND', `no audit key file at ${file}`);
  return Buffer.from((await readFile(file, 'utf8')).trim(), 'utf8');
}
