/**
 * Exponential backoff with full jitter: uniform in [0, min(maxDelay, base * 2^attempts)). Jitter spreads the
 * retries of many messages that failed together (a receiver's outage) instead of sending them in waves.
 */
export function webhookRetryDelay(options: {
  readonly attempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly random?: () => number;
}): number {
  const ceiling = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** Math.min(options.attempts, 52));
  return Math.floor(ceiling * (options.random ?? Math.random)());
}
