import { describe, expect, it } from 'vitest';
import { LIVE_LOG_BYTES, LIVE_LOG_LINES, LiveLogs } from './live-logs.ts';

const log = (taskId: string, message: string) => ({
  type: 'log' as const,
  taskId,
  level: 'log' as const,
  message,
});
const status = (taskId: string, s: 'running' | 'paused' | 'succeeded') => ({
  type: 'status' as const,
  taskId,
  status: s,
  pauseReason: null,
});

describe('LiveLogs', () => {
  it("keeps each running task's lines apart, and forgets them at every status change", () => {
    const live = new LiveLogs();
    live.observe(status('a', 'running'));
    live.observe(log('a', 'a1'));
    live.observe(log('b', 'b1'));
    live.observe(log('a', 'a2'));
    expect(live.of('a').map((l) => l.message)).toEqual(['a1', 'a2']);
    expect(live.of('b').map((l) => l.message)).toEqual(['b1']);
    live.observe(status('a', 'paused'));
    expect(live.of('a')).toEqual([]);
    expect(live.of('b')).toHaveLength(1);
    expect(live.of('nobody')).toEqual([]);
  });

  it('keeps the most recent lines within its line and byte bounds', () => {
    const live = new LiveLogs();
    for (let i = 0; i < LIVE_LOG_LINES + 5; i++) live.observe(log('a', `line ${i}`));
    expect(live.of('a')).toHaveLength(LIVE_LOG_LINES);
    expect(live.of('a')[0]?.message).toBe('line 5');
    const big = 'x'.repeat(LIVE_LOG_BYTES / 4 + 1);
    for (let i = 0; i < 8; i++) live.observe(log('b', `${i}${big}`));
    const kept = live.of('b');
    expect(kept.reduce((n, l) => n + l.message.length, 0)).toBeLessThanOrEqual(LIVE_LOG_BYTES);
    expect(kept.at(-1)?.message.startsWith('7')).toBe(true);
    // One line over the bound is still kept: the newest line is never dropped.
    live.observe(log('c', 'y'.repeat(LIVE_LOG_BYTES * 2)));
    expect(live.of('c')).toHaveLength(1);
  });
});
