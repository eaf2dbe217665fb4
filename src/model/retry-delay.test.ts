import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { toMistralToolCallId } from './mistral-tool-call-id.ts';
import { backoffDelayMs, parseRetryAfterMs, sleep } from './retry-delay.ts';

describe('parseRetryAfterMs', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  it('reads seconds and HTTP dates, capped and never negative', () => {
    expect(parseRetryAfterMs('2', 30_000, now)).toBe(2000);
    expect(parseRetryAfterMs('0.5', 30_000, now)).toBe(500);
    expect(parseRetryAfterMs('3600', 30_000, now)).toBe(30_000);
    expect(parseRetryAfterMs('Thu, 01 Jan 2026 00:00:05 GMT', 30_000, now)).toBe(5000);
    expect(parseRetryAfterMs('Wed, 31 Dec 2025 23:00:00 GMT', 30_000, now)).toBe(0);
  });
  it('ignores a missing or unreadable header', () => {
    expect(parseRetryAfterMs(null, 30_000, now)).toBeUndefined();
    expect(parseRetryAfterMs('soon', 30_000, now)).toBeUndefined();
    expect(parseRetryAfterMs('-1', 30_000, now)).toBeUndefined();
  });
});

describe('backoffDelayMs', () => {
  it('grows exponentially under the cap, with full jitter', () => {
    expect(backoffDelayMs(0, 500, 30_000, () => 1)).toBe(500);
    expect(backoffDelayMs(3, 500, 30_000, () => 1)).toBe(4000);
    expect(backoffDelayMs(10, 500, 30_000, () => 1)).toBe(30_000);
    expect(backoffDelayMs(3, 500, 30_000, () => 0.5)).toBe(2000);
  });
});

describe('toMistralToolCallId', () => {
  it('keeps valid ids and maps others to 9 stable alphanumeric characters', () => {
    expect(toMistralToolCallId('D681PevKs')).toBe('D681PevKs');
    const mapped = toMistralToolCallId('call_Xy7aQ2bLk9mN0pRsTuVw');
    expect(mapped).toMatch(/^[A-Za-z0-9]{9}$/);
    expect(toMistralToolCallId('call_Xy7aQ2bLk9mN0pRsTuVw')).toBe(mapped);
    expect(toMistralToolCallId('call_other')).not.toBe(mapped);
  });
});

describe('sleep', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('waits a Retry-After past one timer (2^31-1 ms) in full, and stops when aborted', async () => {
    const ms = 99_999_999_000;
    let slept = false;
    const controller = new AbortController();
    void sleep(ms, controller.signal).then(() => (slept = true));
    await vi.advanceTimersByTimeAsync(2 ** 31);
    expect(slept).toBe(false);
    await vi.advanceTimersByTimeAsync(ms - 2 ** 31);
    expect(slept).toBe(true);
    const stopped = new AbortController();
    const pending = sleep(ms, stopped.signal);
    stopped.abort(new Error('stopped'));
    await expect(pending).rejects.toThrow('stopped');
    expect(vi.getTimerCount()).toBe(0);
  });
});
