import { randomBytes } from 'node:crypto';
import { CodecallError, errorRow, isCodecallError } from '../../errors/index.ts';
import type { ServiceStore, WebhookMessage } from '../../spec/index.ts';
import { longTimeout } from '../../spec/index.ts';
import { attemptOutcome, attemptWebhook } from './deliver-webhook.ts';
import { buildWebhookBody } from './webhook-body.ts';
import type { WebhookBodyStore } from './webhook-body.ts';
import { webhookRetryDelay } from './webhook-backoff.ts';
import { webhookKey } from './sign-webhook.ts';
import type { LookupAll } from './webhook-target.ts';

export const DEFAULT_WEBHOOK_TIMEOUT_MS = 10_000;
export const DEFAULT_WEBHOOK_MAX_AGE_MS = 24 * 60 * 60 * 1000;
export const DEFAULT_WEBHOOK_BASE_DELAY_MS = 1000;
export const DEFAULT_WEBHOOK_MAX_DELAY_MS = 60 * 60 * 1000;
export const DEFAULT_WEBHOOK_CONCURRENCY = 8;
/** The longest the loop sleeps: how soon it sees rows another connection (or process) added. */
export const DEFAULT_WEBHOOK_POLL_MS = 1000;
/** Messages one `deliverDue` pass takes. */
const PASS_LIMIT = 100;

/** pino-shaped, so a Fastify `app.log` fits. */
export interface WebhookLogger {
  warn(details: Record<string, unknown>, message: string): void;
  debug?(details: Record<string, unknown>, message: string): void;
}

export type WebhookDispatcherStore = Pick<
  ServiceStore,
  'dueWebhooks' | 'recordWebhookAttempt' | 'nextWebhookAt' | 'releaseWebhook'
> &
  WebhookBodyStore;

export interface WebhookDispatcherOptions {
  readonly store: WebhookDispatcherStore;
  /**
   * `whsec_<base64>`, required: nothing is sent unsigned. A service without a secret refuses `callback_url` at
   * submission and runs no dispatcher (its outbox rows wait for one).
   */
  readonly secret: string;
  /** Deliver to private, loopback and other non-public addresses too (tests, one trusted network). */
  readonly allowPrivate?: boolean;
  /** Per attempt, DNS included. */
  readonly timeoutMs?: number;
  /** After this long since the event, a failing message is given up (`failed`). */
  readonly maxAgeMs?: number;
  readonly baseDelayMs?: number;
  readonly maxDelayMs?: number;
  /** Attempts in flight at once. */
  readonly concurrency?: number;
  readonly pollMs?: number;
  /** Epoch ms. */
  readonly clock?: () => number;
  /** In [0, 1): the jitter. */
  readonly random?: () => number;
  readonly logger?: WebhookLogger;
  /** Name resolution (default node:dns lookup, all addresses). */
  readonly lookup?: LookupAll;
}

export interface WebhookDispatcher {
  /** Runs the delivery loop until `close()`. */
  start(): void;
  /** Stops the loop and aborts attempts in flight; those stay pending (delivered after a restart). */
  close(): Promise<void>;
  /** One pass over the messages due now; resolves with the attempts recorded. */
  deliverDue(): Promise<number>;
}

function positive(name: string, value: number, min: number): number {
  if (!Number.isFinite(value) || value < min) {
    throw new CodecallError('INVALID_CONFIG', `webhook ${name} must be a number >= ${min}`, {
      details: { field: name, value },
    });
  }
  return value;
}

/** Delivers the webhook outbox: signed (Standard Webhooks), at least once, with backoff, to vetted targets only. */
export function createWebhookDispatcher(options: WebhookDispatcherOptions): WebhookDispatcher {
  const key = webhookKey(options.secret);
  const store = options.store;
  const timeoutMs = positive('timeoutMs', options.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS, 1);
  const maxAgeMs = positive('maxAgeMs', options.maxAgeMs ?? DEFAULT_WEBHOOK_MAX_AGE_MS, 0);
  const baseDelayMs = positive('baseDelayMs', options.baseDelayMs ?? DEFAULT_WEBHOOK_BASE_DELAY_MS, 0);
  const maxDelayMs = positive('maxDelayMs', options.maxDelayMs ?? DEFAULT_WEBHOOK_MAX_DELAY_MS, baseDelayMs);
  const concurrency = Math.floor(
    positive('concurrency', options.concurrency ?? DEFAULT_WEBHOOK_CONCURRENCY, 1),
  );
  const pollMs = positive('pollMs', options.pollMs ?? DEFAULT_WEBHOOK_POLL_MS, 1);
  const clock = options.clock ?? Date.now;
  const logger = options.logger;
  const closing = new AbortController();
  const inFlight = new Map<string, Promise<boolean>>();
  // Claims keep other servers' dispatchers off a message while this one sends it; one outlives an attempt.
  const owner = `dispatcher-${process.pid}-${randomBytes(6).toString('hex')}`;
  const claim = { owner, leaseMs: timeoutMs + 5000 };
  let loop: Promise<void> | null = null;
  let wakeLoop: (() => void) | null = null;
  let woken = false;

  const wake = (): void => {
    woken = true;
    wakeLoop?.();
  };

  /** True when an attempt was recorded; false when closing cut it short (it stays pending). */
  async function deliver(message: WebhookMessage): Promise<boolean> {
    let body = message.body;
    if (body === null) {
      try {
        body = await buildWebhookBody(message, { store, signal: closing.signal });
      } catch (error) {
        if (closing.signal.aborted) return false;
        const code = isCodecallError(error) ? error.code : 'INTERNAL';
        const reason = `could not build the body: ${error instanceof Error ? error.message : String(error)}`;
        logger?.warn({ webhookId: message.id, event: message.event, code }, reason);
        // A transient failure passes (the next pass builds the body again); any other is permanent.
        if (errorRow(code)?.transient) return false;
        await store.recordWebhookAttempt(
          message.id,
          { outcome: 'failed', error: reason, body: '' },
          { now: clock() },
        );
        return true;
      }
    }
    let result;
    try {
      result = await attemptWebhook({
        message,
        body,
        key,
        allowPrivate: options.allowPrivate ?? false,
        timeoutMs,
        now: clock(),
        closing: closing.signal,
        lookup: options.lookup,
      });
    } catch {
      return false; // closing: not an attempt
    }
    const now = clock();
    const retryDelayMs = webhookRetryDelay({
      attempts: message.attempts,
      baseDelayMs,
      maxDelayMs,
      random: options.random,
    });
    const outcome = attemptOutcome({ result, message, now, maxAgeMs, retryDelayMs });
    // Recorded even while closing: the receiver has answered, so the attempt happened.
    await store.recordWebhookAttempt(message.id, { ...outcome, body }, { now });
    const details = {
      webhookId: message.id,
      event: message.event,
      url: message.url,
      attempts: message.attempts + 1,
    };
    if (outcome.outcome === 'delivered') logger?.debug?.(details, 'webhook delivered');
    else
      logger?.warn({ ...details, outcome: outcome.outcome, error: outcome.error }, 'webhook attempt failed');
    return true;
  }

  function track(message: WebhookMessage): Promise<boolean> {
    const attempt = deliver(message)
      .then(async (recorded) => {
        // Not an attempt (cut short by close): the message is due again at once, here or elsewhere.
        if (!recorded) await store.releaseWebhook(message.id, owner).catch(() => undefined);
        return recorded;
      })
      .catch((error: unknown) => {
        logger?.warn({ webhookId: message.id, error: String(error) }, 'webhook attempt not recorded');
        return false;
      })
      .finally(() => {
        inFlight.delete(message.id);
        wake();
      });
    inFlight.set(message.id, attempt);
    return attempt;
  }

  /** Starts attempts for due messages while slots are free; returns how many it started. */
  async function fill(): Promise<number> {
    const free = concurrency - inFlight.size;
    if (free <= 0) return 0;
    const due = await store.dueWebhooks({
      now: clock(),
      limit: free,
      claim,
      signal: closing.signal,
    });
    let started = 0;
    for (const message of due) {
      if (inFlight.size >= concurrency) break;
      if (inFlight.has(message.id)) continue;
      void track(message);
      started++;
    }
    return started;
  }

  function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (woken || closing.signal.aborted) {
        resolve();
        return;
      }
      const done = (): void => {
        timer.clear();
        closing.signal.removeEventListener('abort', done);
        wakeLoop = null;
        resolve();
      };
      const timer = longTimeout(done, ms);
      closing.signal.addEventListener('abort', done, { once: true });
      wakeLoop = done;
    });
  }

  async function run(): Promise<void> {
    while (!closing.signal.aborted) {
      woken = false;
      let delay = pollMs;
      try {
        await fill();
        // All slots busy: a finished attempt wakes the loop. Otherwise sleep until the next due message; one
        // that is due already is in flight (or just arrived), so the poll interval bounds the wait.
        if (inFlight.size < concurrency) {
          const next = await store.nextWebhookAt({ signal: closing.signal });
          const now = clock();
          if (next !== null && next > now) delay = Math.min(next - now, pollMs);
        }
      } catch (error) {
        if (!closing.signal.aborted) logger?.warn({ error: String(error) }, 'webhook dispatcher pass failed');
      }
      await sleep(delay);
    }
  }

  return {
    start(): void {
      if (closing.signal.aborted) throw new CodecallError('SHUTDOWN', 'the webhook dispatcher is closed');
      loop ??= run();
    },

    async close(): Promise<void> {
      closing.abort(new CodecallError('SHUTDOWN', 'the webhook dispatcher is closing'));
      await loop;
      await Promise.allSettled(inFlight.values());
    },

    async deliverDue(): Promise<number> {
      if (closing.signal.aborted) return 0;
      const due = (
        await store.dueWebhooks({ now: clock(), limit: PASS_LIMIT, signal: closing.signal })
      ).filter((m) => !inFlight.has(m.id));
      let recorded = 0;
      const worker = async (): Promise<void> => {
        for (let m = due.shift(); m !== undefined; m = due.shift()) {
          if (closing.signal.aborted) return;
          if (!inFlight.has(m.id) && (await track(m))) recorded++;
        }
      };
      await Promise.all(Array.from({ length: Math.min(concurrency, due.length) }, worker));
      return recorded;
    },
  };
}
