import { CodecallError } from '../errors/index.ts';

// Every way a request fails, as the guest will catch it: a stable code and a reason in `details` a program can
// branch on. Messages name hosts and secrets' names, never a secret's value.

export type RefusalReason =
  'scheme' | 'not_allowed' | 'method' | 'address' | 'credentials' | 'redirect' | 'secret' | 'header';

export function refused(
  reason: RefusalReason,
  message: string,
  details: Record<string, unknown> = {},
): CodecallError {
  return new CodecallError('EGRESS_REFUSED', message, { details: { reason, ...details } });
}

export type LimitName = 'max_bytes' | 'request_bytes' | 'header_bytes';

export function overLimit(limit: LimitName, max: number, message: string): CodecallError {
  return new CodecallError('EGRESS_LIMIT', message, { details: { limit, max } });
}

export function timedOut(seconds: number): CodecallError {
  return new CodecallError('EGRESS_TIMEOUT', `the request took longer than ${seconds} s`, {
    details: { timeout_seconds: seconds },
  });
}

/** A request's own malformed part (not a policy): the net.fetch call's arguments are wrong. */
export function invalid(field: string, message: string): CodecallError {
  return new CodecallError('INVALID_ARGUMENT', `${field}: ${message}`, { details: { field } });
}

const CAUSES: Readonly<Record<string, string>> = {
  ENOTFOUND: 'dns',
  EAI_AGAIN: 'dns',
  EAI_FAIL: 'dns',
  EAI_NODATA: 'dns',
  EAI_NONAME: 'dns',
  ENODATA: 'dns',
  ECONNREFUSED: 'connection_refused',
  ECONNRESET: 'connection_reset',
  ECONNABORTED: 'connection_reset',
  EPIPE: 'connection_reset',
  EHOSTUNREACH: 'unreachable',
  ENETUNREACH: 'unreachable',
  EHOSTDOWN: 'unreachable',
  ENETDOWN: 'unreachable',
  ETIMEDOUT: 'unreachable',
  EPROTO: 'tls',
};

const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|ERR_OSSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH)/;

/** The short cause of a network error, from its node code. */
export function causeOf(code: string): string {
  const known = CAUSES[code];
  if (known !== undefined) return known;
  if (code.startsWith('HPE_')) return 'protocol';
  if (TLS_CODE.test(code)) return 'tls';
  return 'network';
}

/** EGRESS_FAILED for what the network, DNS or TLS threw while talking to `host`. */
export function failed(host: string, error: unknown): CodecallError {
  if (error instanceof CodecallError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  const cause = typeof code === 'string' ? causeOf(code) : 'network';
  const said = error instanceof Error ? error.message : String(error);
  return new CodecallError('EGRESS_FAILED', `the request to ${host} failed (${cause}): ${said}`, {
    cause: error,
    details: { cause, host, ...(typeof code === 'string' ? { code } : {}) },
  });
}

/** What an abort rejects with: the signal's reason when it is an error, as elsewhere in codecall. */
export function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error
    ? reason
    : new CodecallError('ABORTED', 'the request was aborted', { cause: reason });
}

/** A response body past `max_bytes` (the declared length, or what arrived). */
export function bodyTooLarge(host: string, maxBytes: number): CodecallError {
  return overLimit('max_bytes', maxBytes, `the response body of ${host} is over ${maxBytes} bytes`);
}

/** The server closed the connection before the whole body arrived. */
export function closedMidBody(host: string): CodecallError {
  return failed(host, Object.assign(new Error('the connection closed mid-body'), { code: 'ECONNRESET' }));
}
