import { corruptTaskOf } from '../spec/index.ts';
import type { CorruptTask, TaskRecord } from '../spec/index.ts';
import { taskView } from './task-view.ts';
import type { TaskView } from '../api/index.ts';

/**
 * The view of a task the store cannot read as written, marked `corrupt`: from its record when that was read
 * (its journal is what is broken; a garbled result is left out), else from what its plain columns still say.
 */
export function corruptTaskView(c: CorruptTask, record?: TaskRecord): TaskView {
  const corrupt = { code: 'CHECKPOINT_CORRUPT', message: c.message } as const;
  if (record !== undefined) {
    for (const r of [record, { ...record, result: null }]) {
      try {
        return { ...taskView(r), corrupt };
      } catch (e) {
        if (corruptTaskOf(e, record) === null) throw e;
      }
    }
  }
  return {
    task_id: c.taskId,
    status: c.status,
    pause_reason: null,
    checkpoint_id: null,
    resumable: false,
    pending_approvals: [],
    pending_inputs: [],
    attention: null,
    attention_calls: [],
    current_step: 0,
    progress: { tool_calls_completed: 0, tool_calls_carried: 0, journal_entries: 0, steps_completed: 0 },
    code: null,
    instruction: null,
    mode: null,
    answer_schema: null,
    steps: null,
    revision: null,
    artifacts: [],
    result: null,
    error: null,
    corrupt,
    language: '',
    metadata: null,
    network_access: null,
    attempts: 0,
    tenant: c.tenant,
    session_id: null,
    batch_id: null,
    priority: 0,
    callback_url: null,
    max_retries: 0,
    retries: 0,
    deadline: null,
    created_at: c.createdAt,
    updated_at: c.updatedAt,
  };
}
