import type { EgressRequest } from '../spec/index.ts';
import { invalid, overLimit } from './egress-errors.ts';
import { METHOD_TOKEN } from '../spec/index.ts';
import { checkHeaders } from './request-headers.ts';
import type { Header } from './request-headers.ts';

export type RedirectMode = 'follow' | 'manual' | 'error';

/** A request's parts, checked before anything is resolved or sent. */
export interface RequestParts {
  readonly url: URL;
  readonly method: string;
  readonly headers: Header[];
  readonly body: Buffer | null;
  readonly redirect: RedirectMode;
  /** The program's timeout for this request (seconds), absent when it gives none. */
  readonly timeoutSeconds?: number;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * The request as the guest gave it, checked: malformed parts are INVALID_ARGUMENT (the net.fetch call's arguments
 * are wrong), a body over `maxRequestBytes` is EGRESS_LIMIT, measured before it is decoded.
 */
export function requestParts(request: EgressRequest, maxRequestBytes: number): RequestParts {
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    throw invalid('url', `"${String(request.url).slice(0, 200)}" is not an absolute URL`);
  }
  // The fragment never leaves the client.
  url.hash = '';
  if (typeof request.method !== 'string' || !METHOD_TOKEN.test(request.method))
    throw invalid('method', 'is not an HTTP method');
  const method = request.method.toUpperCase();
  const redirect = request.redirect ?? 'follow';
  if (redirect !== 'follow' && redirect !== 'manual' && redirect !== 'error')
    throw invalid('redirect', "must be 'follow', 'manual' or 'error'");
  const headers = checkHeaders(request.headers);
  let body: Buffer | null = null;
  if (request.body !== null && request.body !== undefined) {
    if (typeof request.body !== 'string') throw invalid('body', 'must be base64 or null');
    const tooLarge = (): Error =>
      overLimit('request_bytes', maxRequestBytes, `the request body is over ${maxRequestBytes} bytes`);
    if (Math.floor((request.body.length * 3) / 4) - 2 > maxRequestBytes) throw tooLarge();
    if (request.body.length % 4 === 1 || !BASE64.test(request.body)) throw invalid('body', 'is not base64');
    body = Buffer.from(request.body, 'base64');
    if (body.length > maxRequestBytes) throw tooLarge();
  }
  const timeoutSeconds = request.timeoutSeconds;
  if (
    timeoutSeconds !== undefined &&
    !(typeof timeoutSeconds === 'number' && Number.isFinite(timeoutSeconds) && timeoutSeconds > 0)
  )
    throw invalid('timeoutSeconds', 'must be a number of seconds above 0');
  return {
    url,
    method,
    headers,
    body,
    redirect,
    ...(timeoutSeconds === undefined ? {} : { timeoutSeconds }),
  };
}
