import { describe, expect, it } from 'vitest';
import { AnswerWait, SLOW_PROBE_EVERY } from './answer-wait.ts';

describe('AnswerWait', () => {
  it('polls for a tool until it answers after the window, and again once it answers within it', () => {
    const w = new AnswerWait(250);
    expect(w.worthPolling).toBe(false);
    w.sent(1, 1, 0, 0);
    expect(w.worthPolling).toBe(true);
    w.answered(1, 1, 5); // 5 ms: slow
    expect(w.worthPolling).toBe(false);
    w.sent(1, 2, 0, 10);
    expect(w.worthPolling).toBe(false);
    w.answered(1, 2, 10.1); // 0.1 ms: quick again
    w.sent(1, 3, 0, 20);
    expect(w.worthPolling).toBe(true);
  });

  it('keeps tools and executions apart, and a quick call out keeps polling beside a slow one', () => {
    const w = new AnswerWait(250);
    w.sent(1, 1, 0, 0);
    w.answered(1, 1, 10); // tool 0 of execution 1 is slow
    w.sent(1, 2, 0, 20);
    w.sent(1, 3, 1, 20); // tool 1: not known slow
    w.sent(2, 1, 0, 20); // tool 0 of another execution: its own
    expect(w.worthPolling).toBe(true);
    w.answered(1, 3, 20.1);
    w.answered(2, 1, 20.1);
    expect(w.worthPolling).toBe(false);
  });

  it('recounts calls still out when their tool changes class, and forgets an execution that ended', () => {
    const w = new AnswerWait(250);
    w.sent(1, 1, 0, 0);
    w.sent(1, 2, 0, 0);
    w.answered(1, 1, 10); // slow now: the other call out is not polled for
    expect(w.worthPolling).toBe(false);
    w.sent(1, 3, 1, 11);
    expect(w.worthPolling).toBe(true);
    w.ended(1);
    expect(w.worthPolling).toBe(false);
    w.answered(1, 3, 12); // an answer after the end changes nothing
    expect(w.worthPolling).toBe(false);
  });

  it('polls for one call in SLOW_PROBE_EVERY of a slow tool, so a tool slow only through the wake-up turns quick again', () => {
    const w = new AnswerWait(250);
    w.sent(1, 0, 0, 0);
    w.answered(1, 0, 5); // slow
    const polled: boolean[] = [];
    for (let i = 1; i <= SLOW_PROBE_EVERY; i++) {
      w.sent(1, i, 0, 10 * i);
      polled.push(w.worthPolling);
      // Slow while slept for; the polled one is answered within the window.
      w.answered(1, i, 10 * i + (w.worthPolling ? 0.1 : 5));
      if (i < SLOW_PROBE_EVERY) expect(w.worthPolling).toBe(false);
    }
    expect(polled.filter(Boolean).length).toBe(1);
    expect(polled.at(-1)).toBe(true);
    w.sent(1, 100, 0, 1000);
    expect(w.worthPolling).toBe(true);
  });

  it('a probe still out when its tool turns quick is counted once', () => {
    const w = new AnswerWait(250);
    w.sent(1, 0, 0, 0);
    w.answered(1, 0, 5);
    for (let i = 1; i < SLOW_PROBE_EVERY; i++) w.sent(1, i, 0, 10);
    w.sent(1, SLOW_PROBE_EVERY, 0, 10); // the probe
    expect(w.worthPolling).toBe(true);
    w.answered(1, 1, 10.1); // quick: every call of the tool counts now
    for (let i = 2; i <= SLOW_PROBE_EVERY; i++) w.answered(1, i, 10.1);
    expect(w.worthPolling).toBe(false);
  });
});
