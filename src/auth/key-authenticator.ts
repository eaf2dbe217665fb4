import { CodecallError } from '../errors/index.ts';
import type { Authenticate, Principal, ServiceStore } from '../spec/index.ts';
import { hashApiKey } from './api-keys.ts';

/** Bearer API keys looked up by hash in the store; 401 UNAUTHORIZED for a missing, malformed or unknown key. */
export function keyAuthenticator(store: ServiceStore): Authenticate {
  return async (authorization): Promise<Principal> => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    if (!match?.[1]) {
      throw new CodecallError('UNAUTHORIZED', 'send an API key as "Authorization: Bearer KEY"', {
        details: { header: 'Authorization' },
      });
    }
    const key = await store.findApiKey(hashApiKey(match[1]));
    if (!key) throw new CodecallError('UNAUTHORIZED', 'unknown or revoked API key', { details: {} });
    return { tenant: key.tenant, role: key.role, keyId: key.id, actor: `key:${key.id}` };
  };
}
