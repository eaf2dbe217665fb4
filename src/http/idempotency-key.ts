import type { FastifyRequest } from 'fastify';
import { canonicalJson, sha256Hex } from '../codec/index.ts';
import { CodecallError } from '../errors/index.ts';
import type { CreateOptions } from '../api/index.ts';

/** The request's `Idempotency-Key` (undefined without one); a bad header is BAD_REQUEST. */
export function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const key = request.headers['idempotency-key'];
  if (Array.isArray(key) || (key !== undefined && (key.length === 0 || key.length > 255))) {
    throw new CodecallError('BAD_REQUEST', 'Idempotency-Key must be one value of 1-255 characters', {
      details: { field: 'Idempotency-Key' },
    });
  }
  return key;
}

/**
 * The key as the runtime takes it: per tenant (two tenants may use the same key for different tasks), bound to
 * the request (`identity`, hashed canonically: check it is plain JSON first, the hash recurses).
 */
export function idempotencyOf(
  request: FastifyRequest,
  key: string | undefined,
  identity: unknown,
): Pick<CreateOptions, 'idempotency'> {
  if (key === undefined) return {};
  const requestHash = sha256Hex(canonicalJson(identity));
  return { idempotency: { key: `${request.principal.tenant}\u0000${key}`, requestHash } };
}
