import { followSignal } from './follow-signal.ts';
/** The longest delay one setTimeout keeps: Node fires a longer (or non-finite) one after 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export interface LongTimeoutOptions {
  /** Aborting it clears the timer: `fn` never runs. */
  readonly signal?: AbortSignal;
  /** The timer alone does not keep the process alive. */
  readonly unref?: boolean;
}

export interface LongTimer {
  clear(): void;
}

/**
 * setTimeout for any delay a guest or a caller can ask for: past 2^31-1 ms it waits in steps, so it never fires
 * early; `Infinity` never fires. NaN and negative delays are 0, as with setTimeout. Every delay that comes from a
 * program, a limit or a request goes through here.
 */
export function longTimeout(fn: () => void, ms: number, options: LongTimeoutOptions = {}): LongTimer {
  const { signal, unref = false } = options;
  let timer: NodeJS.Timeout | undefined;
  const clear = (): void => {
    clearTimeout(timer);
    timer = undefined;
    signal?.removeEventListener('abort', clear);
  };
  if (signal?.aborted) return { clear };
  // Counted down by the steps taken, not read from a clock: a step only ever ends late, never early.
  let left = ms > 0 ? ms : 0;
  const step = (): void => {
    const wait = Math.min(left, MAX_TIMER_MS);
    left -= wait;
    timer = setTimeout(left > 0 ? step : fire, wait);
    if (unref) timer.unref();
  };
  const fire = (): void => {
    clear();
    fn();
  };
  signal?.addEventListener('abort', clear, { once: true });
  step();
  return { clear };
}

/** Resolves after `ms` (see longTimeout), or at once when `signal` aborts. */
export function longSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const onAbort = (): void => resolve();
    signal?.addEventListener('abort', onAbort, { once: true });
    longTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      ms,
      signal ? { signal } : {},
    );
  });
}

/**
 * The delay of a periodic timer (a poll, a lease renewal, a probe): at most MAX_TIMER_MS, as Node would run a
 * longer one every 1 ms. A poll that comes sooner than asked is harmless; one every millisecond is a spin.
 */
export function intervalMs(ms: number): number {
  return ms > 0 ? Math.min(ms, MAX_TIMER_MS) : 0;
}

/**
 * One operation's own signal with a deadline of any length (see longTimeout): it aborts with a `TimeoutError`
 * after `ms`, and follows `outer` (followSignal) when given. `release()` when the operation ends drops the timer
 * and the listener on `outer`: a long-lived outer signal (a task's, the service's) then holds nothing of it, where
 * AbortSignal.any would hang a dependent per operation and AbortSignal.timeout its timer until it fired (and
 * fires a delay past 2^31-1 ms after 1 ms). The timer does not keep the process alive.
 */
export function deadlineSignal(
  ms: number,
  outer?: AbortSignal,
): { signal: AbortSignal; release: () => void } {
  const { controller, release } = followSignal(outer);
  const timer = longTimeout(
    () => controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
    ms,
    { unref: true },
  );
  return {
    signal: controller.signal,
    release: () => {
      timer.clear();
      release();
    },
  };
}
