import { describe, expect, it } from 'vitest';
import type { JournalEntry } from '../spec/index.ts';
import { nextAttempt } from './crash-loop.ts';

let seq = 0;
function entry(type: JournalEntry['type'], data: Record<string, unknown> = {}): JournalEntry {
  seq += 1;
  return { taskId: 't', seq, type, data, checksum: '', createdAt: '' } as JournalEntry;
}
const attempt = (stalled: number) => entry('control', { action: 'attempt', stalled });

describe('nextAttempt', () => {
  it('starts at zero and counts attempts that left nothing behind', () => {
    expect(nextAttempt([entry('task_input')], 3)).toEqual({
      entry: { type: 'control', data: { action: 'attempt', stalled: 0 } },
    });
    expect(nextAttempt([entry('task_input'), attempt(0)], 3)).toMatchObject({
      entry: { data: { stalled: 1 } },
    });
    expect(nextAttempt([entry('task_input'), attempt(0), attempt(1)], 3)).toMatchObject({
      entry: { data: { stalled: 2 } },
    });
  });

  it('fails with CRASH_LOOP once the limit of stalled attempts is reached', () => {
    const result = nextAttempt([entry('task_input'), attempt(0), attempt(1), attempt(2)], 3);
    expect('error' in result && result.error.code).toBe('CRASH_LOOP');
  });

  it('resets after progress or a clean pause', () => {
    const progressed = [entry('task_input'), attempt(0), attempt(1), attempt(2), entry('tool_intent')];
    expect(nextAttempt(progressed, 3)).toMatchObject({ entry: { data: { stalled: 0 } } });
    const paused = [entry('task_input'), attempt(0), attempt(1), entry('control', { action: 'pause' })];
    expect(nextAttempt(paused, 3)).toMatchObject({ entry: { data: { stalled: 0 } } });
  });
});
