import { describe, expect, it } from 'vitest';
import { AnswerWait } from './answer-wait.ts';

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
});
