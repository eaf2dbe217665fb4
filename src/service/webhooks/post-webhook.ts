import { request as httpRequest } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { pinnedLookup } from '../../egress/index.ts';
import type { WebhookTarget } from './webhook-target.ts';

const USER_AGENT = 'codecall-webhooks/1';

export interface PostResult {
  readonly status: number;
  /** The `location` of a redirect, which is never followed. */
  readonly location: string | null;
}

/**
 * POSTs one webhook (node:http rather than fetch: fetch cannot be pinned to vetted addresses without undici).
 * Redirects are not followed; the response body is drained and ignored. Rejects on a network error or abort.
 */
export function postWebhook(options: {
  readonly target: WebhookTarget;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly signal: AbortSignal;
}): Promise<PostResult> {
  const { target, body, signal } = options;
  const request = target.url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<PostResult>((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const req = request(
      {
        protocol: target.url.protocol,
        host: target.host,
        port: target.url.port === '' ? undefined : Number(target.url.port),
        path: `${target.url.pathname}${target.url.search}`,
        method: 'POST',
        headers: {
          ...options.headers,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          'user-agent': USER_AGENT,
        },
        lookup: pinnedLookup(target.addresses),
        // One connection per attempt: nothing pooled outlives close(), and each attempt uses its vetted address.
        agent: false,
        signal,
      },
      (res: IncomingMessage) => {
        const location = res.headers.location ?? null;
        res.on('error', () => undefined);
        res.resume();
        resolve({ status: res.statusCode ?? 0, location });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
