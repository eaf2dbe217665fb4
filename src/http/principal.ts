import { CodecallError } from '../errors/index.ts';
import type { Principal } from '../spec/index.ts';

/** `--insecure-no-auth`: everyone is the admin of tenant `default`. */
export const ANONYMOUS_ADMIN: Principal = Object.freeze({
  tenant: 'default',
  role: 'admin',
  keyId: null,
  actor: 'anonymous',
});

/**
 * The tenant a listing covers: a member's own (naming another is FORBIDDEN); an admin's every tenant (undefined)
 * unless it names one.
 */
export function listedTenant(principal: Principal, requested: string | undefined): string | undefined {
  if (requested !== undefined && !canSee(principal, requested)) {
    throw new CodecallError('FORBIDDEN', 'only an admin key lists another tenant', {
      details: { field: 'tenant' },
    });
  }
  return requested ?? (principal.role === 'admin' ? undefined : principal.tenant);
}

export function canSee(principal: Principal, tenant: string): boolean {
  return principal.role === 'admin' || principal.tenant === tenant;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
}
