import { CodecallError, isCodecallError } from '../errors/index.ts';
import type { TaskRecord, TaskStore } from '../spec/index.ts';
import { isArtifactStore } from '../spec/index.ts';
import { taskView } from './task-view.ts';
import type { TaskView } from '../api/index.ts';

/** How the runtime reads tasks for its answers: the record, its journal's parts and its artifacts. */
export class RuntimeViews {
  constructor(private readonly store: TaskStore) {}

  /** A task whose journal is damaged is still shown (failed, CHECKPOINT_CORRUPT), without the journal's parts. */
  async of(record: TaskRecord): Promise<TaskView> {
    try {
      const artifacts = isArtifactStore(this.store) ? await this.store.listArtifacts(record.id) : undefined;
      return taskView(record, await this.store.readJournal(record.id), artifacts);
    } catch (e) {
      if (isCodecallError(e) && e.code === 'CHECKPOINT_CORRUPT') return taskView(record);
      throw e;
    }
  }

  /** The view from the record alone (no journal read): what a new task or a list shows. */
  ofRecord(record: TaskRecord): TaskView {
    return taskView(record);
  }

  /** A list shows the record alone, but a paused task's view needs its journal (what it waits for). */
  async listed(record: TaskRecord): Promise<TaskView> {
    return record.status === 'paused' ? this.of(record) : taskView(record);
  }

  /** The task now; NOT_FOUND when there is none. */
  async mustGet(taskId: string): Promise<TaskRecord> {
    const task = await this.store.getTask(taskId);
    if (!task) throw new CodecallError('NOT_FOUND', `no task ${taskId}`, { details: { task_id: taskId } });
    return task;
  }

  /** The view of the task now; NOT_FOUND when there is none. */
  async current(taskId: string): Promise<TaskView> {
    return this.of(await this.mustGet(taskId));
  }
}
