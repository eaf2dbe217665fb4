import type { KeyRole } from '../spec/index.ts';

/** Who sends a request: their tenant scopes every task they see; `actor` is journaled with what they do. */
export interface Principal {
  readonly tenant: string;
  readonly role: KeyRole;
  readonly keyId: string | null;
  readonly actor: string;
}

/** Resolves the Authorization header; throws UNAUTHORIZED (401) for a missing or unknown key. */
export type Authenticate = (authorization: string | undefined) => Promise<Principal>;

/** `--insecure-no-auth`: everyone is the admin of tenant `default`. */
export const ANONYMOUS_ADMIN: Principal = Object.freeze({
  tenant: 'default',
  role: 'admin',
  keyId: null,
  actor: 'anonymous',
});

export function canSee(principal: Principal, tenant: string): boolean {
  return principal.role === 'admin' || principal.tenant === tenant;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
}
