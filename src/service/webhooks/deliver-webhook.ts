import { CodecallError, isCodecallError } from '../../errors/index.ts';
import type { WebhookAttempt, WebhookMessage } from '../../spec/index.ts';
import { deadlineSignal } from '../../spec/index.ts';
import { postWebhook } from './post-webhook.ts';
import { signWebhook } from './sign-webhook.ts';
import { resolveWebhookTarget } from './webhook-target.ts';
import type { LookupAll } from './webhook-target.ts';

/** How one attempt ended, before the retry policy: sent, worth retrying, or never worth retrying. */
export type AttemptResult =
  | { readonly kind: 'delivered'; readonly status: number }
  | { readonly kind: 'retry'; readonly error: string }
  | { readonly kind: 'stop'; readonly error: string };

/**
 * One attempt: vet the target (DNS included), sign with a fresh timestamp, POST. 2xx delivers; 410 means the
 * receiver unsubscribed; any other status, a redirect, a network error or the timeout is worth a retry. Throws
 * only when `closing` aborts (the attempt does not count).
 */
export async function attemptWebhook(options: {
  readonly message: Pick<WebhookMessage, 'id' | 'url'>;
  readonly body: string;
  readonly key: Buffer;
  readonly allowPrivate: boolean;
  readonly timeoutMs: number;
  readonly now: number;
  readonly closing: AbortSignal;
  readonly lookup?: LookupAll;
}): Promise<AttemptResult> {
  const { message, closing } = options;
  // The attempt's own signal, released when it ends: `closing` lives as long as the service.
  const { signal, release } = deadlineSignal(options.timeoutMs, closing);
  try {
    const target = await resolveWebhookTarget(message.url, {
      allowPrivate: options.allowPrivate,
      signal,
      lookup: options.lookup,
    });
    const headers = signWebhook(options.key, {
      id: message.id,
      timestamp: options.now / 1000,
      body: options.body,
    });
    const { status, location } = await postWebhook({
      target,
      headers,
      body: options.body,
      signal,
    });
    if (status >= 200 && status < 300) return { kind: 'delivered', status };
    if (status === 410) return { kind: 'stop', error: 'HTTP 410: the receiver unsubscribed' };
    if (status >= 300 && status < 400) {
      return {
        kind: 'retry',
        error: `HTTP ${status}: redirect${location ? ` to ${location}` : ''} not followed`,
      };
    }
    return { kind: 'retry', error: `HTTP ${status}` };
  } catch (error) {
    if (closing.aborted) throw new CodecallError('ABORTED', 'webhook delivery stopped', { cause: error });
    if (isCodecallError(error) && error.code === 'WEBHOOK_TARGET_REFUSED') {
      return { kind: 'stop', error: error.message };
    }
    if (signal.aborted) return { kind: 'retry', error: `timed out after ${options.timeoutMs} ms` };
    return { kind: 'retry', error: describe(error) };
  } finally {
    release();
  }
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && !error.message.includes(code)
    ? `${code}: ${error.message}`
    : error.message;
}

/** The retry policy: what the store records for an attempt's result. */
export function attemptOutcome(options: {
  readonly result: AttemptResult;
  readonly message: Pick<WebhookMessage, 'attempts' | 'createdAt'>;
  readonly now: number;
  readonly maxAgeMs: number;
  readonly retryDelayMs: number;
}): WebhookAttempt {
  const { result, message, now } = options;
  if (result.kind === 'delivered') return { outcome: 'delivered' };
  if (result.kind === 'stop') return { outcome: 'failed', error: result.error };
  const giveUpAt = message.createdAt + options.maxAgeMs;
  const attempts = message.attempts + 1;
  if (now >= giveUpAt) {
    return {
      outcome: 'failed',
      error: `gave up after ${attempts} attempts over ${options.maxAgeMs} ms: ${result.error}`,
    };
  }
  // The last retry is at the deadline rather than never.
  return {
    outcome: 'retry',
    nextAttemptAt: Math.min(now + options.retryDelayMs, giveUpAt),
    error: result.error,
  };
}
