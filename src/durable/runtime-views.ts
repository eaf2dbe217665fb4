import { CodecallError } from '../errors/index.ts';
import type { CorruptTask, TaskRecord, TaskStore } from '../spec/index.ts';
import {
  DEFAULT_REVISIONS_LIMIT,
  corruptTaskOf,
  isArtifactStore,
  isCorruptTask,
  readJournalForView,
  readSummaryForView,
  readTaskForView,
} from '../spec/index.ts';
import { corruptItem, corruptItemOfView } from '../api/index.ts';
import { corruptTaskView } from './corrupt-view.ts';
import { stepsView } from './step-view.ts';
import { taskView } from './task-view.ts';
import type { CorruptTaskItem, RevisedByView, TaskListItem, TaskView } from '../api/index.ts';
import { listItem } from './list-item.ts';

/**
 * How the runtime reads tasks for its answers: the record, its journal's parts and its artifacts. The one place
 * where a task the store cannot read as written (a garbled row, a broken journal, a result that is no value)
 * becomes a view marked `corrupt` (the task's own view) or an item of a list's `corrupt` (lists skip it), so that
 * one damaged task fails neither its own view nor any list of its tenant.
 */
export class RuntimeViews {
  constructor(private readonly store: TaskStore) {}

  /** The task's own view: with the journal's parts, and the tasks that revise it. */
  async of(record: TaskRecord): Promise<TaskView> {
    return this.withJournal(record, true);
  }

  /** The view with the journal's parts (and, with `revisions`, the tasks that revise the task). */
  private async withJournal(record: TaskRecord, revisions: boolean): Promise<TaskView> {
    // The journal's summary and the rows it shows (ADR 0035): a code task's view never reads its whole journal.
    const [journal, revisedBy] = await Promise.all([
      readSummaryForView(this.store, record),
      revisions ? this.revisedBy(record) : undefined,
    ]);
    if (isCorruptTask(journal)) return corruptTaskView(journal, record);
    // An agent task shows its steps, which are its journal's content: read in pages, large values summarised.
    const entries = record.input.kind === 'instruction' ? await readJournalForView(this.store, record) : null;
    if (entries !== null && isCorruptTask(entries)) return corruptTaskView(entries, record);
    const artifacts = isArtifactStore(this.store) ? await this.store.listArtifacts(record.id) : undefined;
    return this.guarded(record, () =>
      taskView(
        record,
        {
          journal,
          ...(entries === null ? {} : { steps: stepsView(entries) }),
          ...(revisedBy === undefined ? {} : { revisedBy }),
        },
        artifacts,
      ),
    );
  }

  /**
   * The tasks that revise this one (ADR 0034): one indexed read of the store, in the task's tenant (a revision is
   * always made in the tenant of the task it revises; the read is scoped all the same). Only a code task is
   * revised; undefined when none revises it, or the store keeps no index of revisions.
   */
  private async revisedBy(record: TaskRecord): Promise<RevisedByView | undefined> {
    if (record.input.kind !== 'code' || this.store.listRevisions === undefined) return undefined;
    const found = await this.store.listRevisions(record.id, {
      tenant: record.tenant,
      limit: DEFAULT_REVISIONS_LIMIT,
    });
    return found.total === 0 ? undefined : { task_ids: [...found.taskIds], total: found.total };
  }

  /** The view from the record alone (no journal read): what a new task shows. */
  ofRecord(record: TaskRecord): TaskView {
    return this.guarded(record, () => taskView(record));
  }

  /** A list shows the record alone, but a paused task's view needs its journal (what it waits for). */
  async listed(record: TaskRecord): Promise<TaskView> {
    return record.status === 'paused' ? this.withJournal(record, false) : this.ofRecord(record);
  }

  /** A store page as a list shows it: the views, and the tasks skipped because they are corrupt. */
  async page(page: {
    tasks: readonly TaskRecord[];
    corrupt?: readonly CorruptTask[];
  }): Promise<{ tasks: TaskView[]; corrupt: CorruptTaskItem[] }> {
    const views = await Promise.all(page.tasks.map((t) => this.listed(t)));
    return {
      tasks: views.filter((v) => v.corrupt === null),
      corrupt: [
        ...(page.corrupt ?? []).map(corruptItem),
        ...views.flatMap((v) => (v.corrupt === null ? [] : [corruptItemOfView(v)])),
      ],
    };
  }

  /** A store page (a summarised one: ADR 0036) as a list shows it: each view as its list item. */
  async itemPage(page: {
    tasks: readonly TaskRecord[];
    corrupt?: readonly CorruptTask[];
  }): Promise<{ tasks: TaskListItem[]; corrupt: CorruptTaskItem[] }> {
    const items = await Promise.all(page.tasks.map((t) => this.item(t)));
    return {
      tasks: items.flatMap((i) => ('task' in i ? [i.task] : [])),
      corrupt: [
        ...(page.corrupt ?? []).map(corruptItem),
        ...items.flatMap((i) => ('corrupt' in i ? [i.corrupt] : [])),
      ],
    };
  }

  /** A record as a list shows it: its view with the big fields summarised (digests the store gave kept). */
  async item(record: TaskRecord): Promise<{ task: TaskListItem } | { corrupt: CorruptTaskItem }> {
    const view = await this.listed(record);
    return view.corrupt === null
      ? { task: listItem(view, record.listedInput) }
      : { corrupt: corruptItemOfView(view) };
  }

  /** The view of the task now (marked `corrupt` if it cannot be read as written); null when there is none. */
  async get(taskId: string): Promise<TaskView | null> {
    const read = await readTaskForView(this.store, taskId);
    if (read === null) return null;
    return isCorruptTask(read) ? corruptTaskView(read) : this.of(read);
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

  private guarded(record: TaskRecord, build: () => TaskView): TaskView {
    try {
      return build();
    } catch (e) {
      const corrupt = corruptTaskOf(e, record);
      if (corrupt === null) throw e;
      return corruptTaskView(corrupt, record);
    }
  }
}
