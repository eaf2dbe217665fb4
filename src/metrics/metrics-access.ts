import { createHash, timingSafeEqual } from 'node:crypto';
import { CodecallError } from '../errors/index.ts';
import type { Authenticate } from '../spec/index.ts';

/**
 * Who may read the metrics: anyone without an authenticator (no-auth mode); else the bearer `token` or an admin
 * key. No or an unknown credential is the authenticator's 401 UNAUTHORIZED; a member's key is 403 FORBIDDEN.
 */
export function checkScraper(options: {
  readonly authenticate?: Authenticate;
  readonly token?: string | null;
}): (authorization: string | undefined) => Promise<void> {
  const { authenticate } = options;
  if (authenticate === undefined) return () => Promise.resolve();
  const token = options.token ?? null;
  const tokenDigest = token === null ? null : digest(token);
  return async (authorization) => {
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
    // Digests of equal length: the comparison takes the same time whatever the guess.
    if (tokenDigest !== null && bearer !== undefined && timingSafeEqual(digest(bearer), tokenDigest)) return;
    const principal = await authenticate(authorization);
    if (principal.role !== 'admin') {
      throw new CodecallError(
        'FORBIDDEN',
        'GET /metrics counts every tenant: it takes the metrics token or an admin key',
        { details: { role: principal.role } },
      );
    }
  };
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
