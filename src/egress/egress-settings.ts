import { lookup as dnsLookup } from 'node:dns/promises';
import { CodecallError } from '../errors/index.ts';
import { refusedAddressReason } from './address-rules.ts';
import { compileSecrets } from './secrets.ts';
import type { SecretBinding, Secrets } from './secrets.ts';
import type { Lookup } from './vet-destination.ts';
import type { EgressAuditSink } from './audit-record.ts';

export interface EgressOptions {
  /** Operator-only: private, loopback, link-local... destinations allowed (tests, a service inside one network). Off by default. */
  readonly allowPrivate?: boolean;
  /** Secrets bound to destinations: `{{secret:NAME}}` in a request header value is replaced only when the request's host matches one of `hosts` (same patterns as allow entries). */
  readonly secrets?: readonly SecretBinding[];
  /** Ceilings and defaults (a task's own values are capped by these): maxBytes default 10 MiB, timeoutSeconds default 30, maxRequestBytes (request body) default 1 MiB, maxRedirects default 5, maxHeaderBytes 64 KiB. */
  readonly limits?: {
    maxBytes?: number;
    timeoutSeconds?: number;
    maxRequestBytes?: number;
    maxRedirects?: number;
  };
  /** For tests: the resolver (default dns.lookup all, verbatim). */
  readonly lookup?: Lookup;
  /** The audit trail: one record per hop that left the box or was refused at it (never headers, bodies or secrets). */
  readonly audit?: EgressAuditSink;
}

export const DEFAULT_EGRESS_LIMITS = Object.freeze({
  maxBytes: 10 * 1024 * 1024,
  timeoutSeconds: 30,
  maxRequestBytes: 1024 * 1024,
  maxRedirects: 5,
  maxHeaderBytes: 64 * 1024,
});

/** The options checked, defaults filled in. */
export interface EgressSettings {
  /** `localhost` names allowed. */
  readonly allowPrivate: boolean;
  /** Why the host will not connect to an address, or null (every address when private ones are allowed). */
  readonly refusedAddress: (address: string) => string | null;
  readonly secrets: Secrets;
  readonly maxBytes: number;
  readonly timeoutSeconds: number;
  readonly maxRequestBytes: number;
  readonly maxRedirects: number;
  readonly maxHeaderBytes: number;
  readonly lookup: Lookup;
  readonly audit: EgressAuditSink | undefined;
}

const systemLookup: Lookup = (host) => dnsLookup(host, { all: true, verbatim: true });

// setTimeout's ceiling (2^31 - 1 ms): a longer wait would fire at once.
const MAX_TIMEOUT_SECONDS = 2_147_483;

export function egressSettings(options: EgressOptions = {}): EgressSettings {
  const given = options.limits ?? {};
  const limits = {
    maxBytes: given.maxBytes ?? DEFAULT_EGRESS_LIMITS.maxBytes,
    timeoutSeconds: given.timeoutSeconds ?? DEFAULT_EGRESS_LIMITS.timeoutSeconds,
    maxRequestBytes: given.maxRequestBytes ?? DEFAULT_EGRESS_LIMITS.maxRequestBytes,
    maxRedirects: given.maxRedirects ?? DEFAULT_EGRESS_LIMITS.maxRedirects,
  };
  const count = (key: 'maxBytes' | 'maxRequestBytes' | 'maxRedirects', least: number): number => {
    const value = limits[key];
    if (!Number.isSafeInteger(value) || value < least)
      throw new CodecallError(
        'INVALID_CONFIG',
        `egress limits.${key} must be an integer of at least ${least}`,
      );
    return value;
  };
  const timeoutSeconds = limits.timeoutSeconds;
  if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0 || timeoutSeconds > MAX_TIMEOUT_SECONDS)
    throw new CodecallError(
      'INVALID_CONFIG',
      `egress limits.timeoutSeconds must be above 0 and at most ${MAX_TIMEOUT_SECONDS}`,
    );
  return {
    allowPrivate: options.allowPrivate === true,
    refusedAddress: options.allowPrivate === true ? () => null : refusedAddressReason,
    secrets: compileSecrets(options.secrets),
    maxBytes: count('maxBytes', 1),
    timeoutSeconds,
    maxRequestBytes: count('maxRequestBytes', 0),
    maxRedirects: count('maxRedirects', 0),
    maxHeaderBytes: DEFAULT_EGRESS_LIMITS.maxHeaderBytes,
    lookup: options.lookup ?? systemLookup,
    audit: options.audit,
  };
}
