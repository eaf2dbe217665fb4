import { describe, expect, it } from 'vitest';
import { newTaskId } from './task-id.ts';

describe('newTaskId', () => {
  it('sorts in creation order, also within one millisecond', () => {
    const now = Date.now();
    const ids = Array.from({ length: 1000 }, (_, i) => newTaskId(now + Math.floor(i / 100)));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids[0]).toMatch(/^task_[0-9A-HJKMNP-TV-Z]{26}$/);
  });
});
