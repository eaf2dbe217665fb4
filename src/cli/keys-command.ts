import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { CodecallError } from '../errors/index.ts';
import { newApiKey } from '../auth/api-keys.ts';
import { keyView } from '../api/index.ts';
import type { KeyRole } from '../spec/index.ts';
import { isPostgresUrl } from '../store/postgres/pg-url.ts';
import type { CliIo } from './cli-io.ts';
import { openTaskDb } from './task-db.ts';
import type { PostgresRefusal } from './task-db.ts';

const KEYS_ON_POSTGRES: PostgresRefusal = {
  feature: 'codecall keys',
  instead:
    "manage keys through a server on it with an admin key (POST, GET and DELETE /api/v1/keys); a server's first start on an empty database prints one",
};

export interface KeysOptions {
  db: string;
  json?: boolean;
}

export interface KeysCreateOptions extends KeysOptions {
  tenant: string;
  admin?: boolean;
  /** admin, member or approver; `--admin` is `--role admin`. */
  role?: string;
  name?: string;
}

const TENANT = /^[A-Za-z0-9_.-]{1,64}$/;
const ROLES: readonly KeyRole[] = ['admin', 'member', 'approver'];

function keyRole(options: KeysCreateOptions): KeyRole {
  const role = options.role ?? (options.admin ? 'admin' : 'member');
  if (!(ROLES as readonly string[]).includes(role) || (options.admin && role !== 'admin')) {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `--role must be one of ${ROLES.join(', ')} (and admin with --admin)`,
      {
        details: { field: 'role' },
      },
    );
  }
  return role as KeyRole;
}

/** `codecall keys create`: a new key, printed once; the store keeps only its hash. */
export async function keysCreate(options: KeysCreateOptions, io: CliIo): Promise<number> {
  if (!TENANT.test(options.tenant)) {
    throw new CodecallError('INVALID_ARGUMENT', '--tenant must be 1-64 characters of A-Z a-z 0-9 _ . -', {
      details: { field: 'tenant' },
    });
  }
  const role = keyRole(options);
  if (options.name !== undefined && (options.name.length === 0 || options.name.length > 200)) {
    throw new CodecallError('INVALID_ARGUMENT', '--name must be 1-200 characters');
  }
  // The first key is often made before the service ever ran: creating the database here is the setup.
  if (!isPostgresUrl(options.db)) await mkdir(dirname(options.db), { recursive: true });
  const store = await openTaskDb(options.db, false, { postgres: KEYS_ON_POSTGRES });
  try {
    const { key, id, keyHash } = newApiKey();
    const record = await store.createApiKey({
      id,
      keyHash,
      tenant: options.tenant,
      role,
      name: options.name,
    });
    if (options.json) {
      io.stdout(`${JSON.stringify({ key_id: record.id, key, tenant: record.tenant, role: record.role })}\n`);
    } else io.stdout(`${key}\n`);
    io.stderr(
      `created ${record.role} key ${record.id} for tenant ${record.tenant}; ` +
        'the key is not stored and cannot be shown again: keep it now\n',
    );
    return 0;
  } finally {
    await store.close();
  }
}

/** `codecall keys list`: every key's id, tenant, role and dates (never a hash). */
export async function keysList(options: KeysOptions, io: CliIo): Promise<number> {
  const store = await openTaskDb(options.db, true, { postgres: KEYS_ON_POSTGRES });
  try {
    const keys = (await store.listApiKeys()).map(keyView);
    if (options.json) {
      io.stdout(`${JSON.stringify({ keys })}\n`);
      return 0;
    }
    for (const k of keys) {
      const revoked = k.revoked_at === null ? '' : `  revoked ${k.revoked_at}`;
      io.stdout(`${k.key_id}  ${k.tenant}  ${k.role}  ${k.name ?? '-'}  ${k.created_at}${revoked}\n`);
    }
    return 0;
  } finally {
    await store.close();
  }
}

/** `codecall keys revoke ID`: the key stops working at once; revoking twice keeps the first time. */
export async function keysRevoke(id: string, options: KeysOptions, io: CliIo): Promise<number> {
  const store = await openTaskDb(options.db, true, { postgres: KEYS_ON_POSTGRES });
  try {
    const record = await store.revokeApiKey(id);
    if (options.json) io.stdout(`${JSON.stringify(keyView(record))}\n`);
    else io.stderr(`key ${record.id} revoked at ${record.revokedAt ?? '?'}\n`);
    return 0;
  } finally {
    await store.close();
  }
}
