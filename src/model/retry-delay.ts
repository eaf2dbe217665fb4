import { CodecallError } from '../errors/index.ts';
import { longTimeout } from '../spec/index.ts';

export const DEFAULT_RETRY_BASE_MS = 500;
export const DEFAULT_MAX_RETRY_DELAY_MS = 30_000;

/** Full-jitter exponential backoff: a random delay in [0, base * 2^attempt], capped. */
export function backoffDelayMs(attempt: number, baseMs: number, capMs: number, random = Math.random): number {
  return Math.round(random() * Math.min(capMs, baseMs * 2 ** attempt));
}

/** Reads `Retry-After` (delta seconds or an HTTP date) as milliseconds, capped; undefined when absent or bad. */
export function parseRetryAfterMs(
  header: string | null,
  capMs: number,
  now = Date.now(),
): number | undefined {
  if (header === null) return undefined;
  const text = header.trim();
  if (text === '') return undefined;
  let ms: number;
  if (/^\d+(\.\d+)?$/.test(text)) ms = Number(text) * 1000;
  else {
    // Date.parse reads "-1" as a year; an HTTP date always names its weekday and month.
    const at = /[A-Za-z]/.test(text) ? Date.parse(text) : Number.NaN;
    if (Number.isNaN(at)) return undefined;
    ms = at - now;
  }
  return Math.min(capMs, Math.max(0, Math.round(ms)));
}

/** Waits `ms` (any delay: a server's `Retry-After` can be years), rejecting as soon as the signal aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(abortReason(signal));
      return;
    }
    const onAbort = (): void => reject(abortReason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    longTimeout(
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      },
      ms,
      { signal },
    );
  });
}

function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new CodecallError('ABORTED', 'aborted', { cause: reason });
}
