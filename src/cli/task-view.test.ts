import { describe, expect, it } from 'vitest';
import { taskView } from '../durable/task-view.ts';
import type { TaskRecord } from '../spec/index.ts';
import { taskDetailText } from './task-view.ts';

const record: TaskRecord = {
  id: 'task_A',
  status: 'failed',
  pauseReason: null,
  input: { kind: 'code', code: 'throw 1', language: 'javascript', seed: 1 },
  result: null,
  error: { code: 'GUEST_ERROR', message: 'boom' },
  executionLog: null,
  resources: null,
  requestedAction: null,
  wakeAt: null,
  attempts: 1,
  version: 3,
  tenant: 'default',
  sessionId: null,
  batchId: null,
  priority: 0,
  callbackUrl: null,
  maxRetries: 0,
  retries: 0,
  runAfter: null,
  deadlineAt: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:01.000Z',
};

describe('tasks show: revised by', () => {
  it('prints no line for a task never revised', () => {
    expect(taskDetailText(taskView(record))).not.toContain('revised by');
  });

  it('prints one line naming the revisions, newest last', () => {
    const view = { ...taskView(record), revised_by: { task_ids: ['task_B', 'task_C'], total: 2 } };
    expect(taskDetailText(view)).toContain('\nrevised by:  task_B, task_C\n');
  });

  it('says when it names only the newest of more', () => {
    const ids = Array.from({ length: 20 }, (_, i) => `task_${i + 5}`);
    const text = taskDetailText({ ...taskView(record), revised_by: { task_ids: ids, total: 24 } });
    expect(text).toContain(`\nrevised by:  ${ids.join(', ')} (the newest 20 of 24)\n`);
  });
});

describe('tasks show: where the program failed', () => {
  it('prints the line and column a failed program gives, and nothing when it gives none', () => {
    const located = {
      ...record,
      error: { code: 'GUEST_ERROR', message: 'boom', name: 'TypeError', line: 3, column: 7 },
    };
    expect(taskView(located).error).toEqual(located.error);
    expect(taskDetailText(taskView(located))).toContain(
      '\nerror:       GUEST_ERROR: boom (line 3, column 7)\n',
    );
    const lineOnly = {
      ...record,
      error: { code: 'GUEST_ERROR', message: 'boom', name: 'ValueError', line: 2 },
    };
    expect(taskDetailText(taskView(lineOnly))).toContain('\nerror:       GUEST_ERROR: boom (line 2)\n');
    expect(taskDetailText(taskView(record))).toContain('\nerror:       GUEST_ERROR: boom\n');
  });
});
