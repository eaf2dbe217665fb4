import { decodeValue, toJsonView } from '../../codec/index.ts';
import { viewApprovals } from '../../durable/index.ts';
import { isCorruptTask, readSummaryForView, readTaskForView } from '../../spec/index.ts';
import type {
  CorruptTask,
  PauseReason,
  TaskRecord,
  TaskStatus,
  TaskStore,
  ViewJournal,
  WebhookEvent,
  WebhookMessage,
} from '../../spec/index.ts';

/** What building a body reads. */
export type WebhookBodyStore = Pick<
  TaskStore,
  'getTask' | 'readJournalPage' | 'readJournal' | 'readJournalSummary' | 'saveJournalSummary' | 'getBatch'
>;

export interface TaskWebhookData {
  readonly task_id: string;
  readonly status: TaskStatus;
  readonly pause_reason: PauseReason | null;
  readonly error: { readonly code: string; readonly message: string } | null;
  /** The program's result (JSON view), once succeeded. */
  readonly output: unknown;
  /** For `task.paused`: the approvals waiting when the webhook was first sent; otherwise empty. */
  readonly pending_approvals: readonly { id: string; tool: string; arguments: unknown }[];
  readonly session_id: string | null;
  readonly batch_id: string | null;
  readonly metadata: Readonly<Record<string, unknown>> | null;
  /**
   * Set when the store cannot read the task as written (CHECKPOINT_CORRUPT, as its view says): the parts that
   * need what is damaged are empty. Null otherwise.
   */
  readonly corrupt: { readonly code: 'CHECKPOINT_CORRUPT'; readonly message: string } | null;
}

export interface BatchWebhookData {
  readonly batch_id: string;
  readonly size: number;
  readonly counts: Readonly<Record<TaskStatus, number>>;
  readonly task_ids: readonly string[];
}

/** The Standard Webhooks envelope: `timestamp` is when the event happened (the status change), not the attempt. */
export interface WebhookPayload {
  readonly type: WebhookEvent;
  readonly timestamp: string;
  readonly data: TaskWebhookData | BatchWebhookData;
}

/**
 * The JSON body of a message, from its snapshot (the task's columns at the change) and what the store holds now
 * for the parts that do not change (metadata, session, batch). Built once, at the first attempt.
 */
export async function buildWebhookBody(
  message: Pick<WebhookMessage, 'event' | 'taskId' | 'batchId' | 'snapshot' | 'createdAt'>,
  options: { readonly store: WebhookBodyStore; readonly signal?: AbortSignal },
): Promise<string> {
  const snap = message.snapshot;
  const at = typeof snap.at === 'number' ? snap.at : message.createdAt;
  const data =
    message.event === 'batch.completed'
      ? await batchData(message, options)
      : await taskData(message, options);
  const payload: WebhookPayload = { type: message.event, timestamp: new Date(at).toISOString(), data };
  return JSON.stringify(payload);
}

async function taskData(
  message: Pick<WebhookMessage, 'event' | 'taskId' | 'batchId' | 'snapshot'>,
  options: { readonly store: WebhookBodyStore; readonly signal?: AbortSignal },
): Promise<TaskWebhookData> {
  const taskId = message.taskId ?? '';
  const snap = message.snapshot;
  const store = options.store;
  // A corrupt task still gets its webhook, marked, as its view would be (not a failed delivery).
  const read = await readTaskForView(store, taskId, { signal: options.signal });
  const task = read === null || isCorruptTask(read) ? null : read;
  const journal = await pausedJournal(message, task, store, options.signal);
  const damage =
    (read !== null && isCorruptTask(read) ? read : null) ??
    (journal !== null && isCorruptTask(journal) ? journal : null);
  const error = snap.error as { code?: unknown; message?: unknown } | null | undefined;
  return {
    task_id: taskId,
    status: snap.status as TaskStatus,
    pause_reason: (snap.pause_reason as PauseReason | null | undefined) ?? null,
    error: error ? { code: String(error.code), message: String(error.message) } : null,
    output: typeof snap.result === 'string' ? toJsonView(decodeValue(snap.result)) : null,
    pending_approvals: (journal === null || isCorruptTask(journal) ? [] : viewApprovals(journal)).map(
      (a) => ({
        id: a.id,
        tool: a.tool,
        arguments: toJsonView(a.arguments),
      }),
    ),
    session_id: task?.sessionId ?? null,
    batch_id: task?.batchId ?? message.batchId,
    metadata: task?.input.metadata ?? null,
    corrupt: damage === null ? null : { code: 'CHECKPOINT_CORRUPT', message: damage.message },
  };
}

/** The journal a `task.paused` body lists the waiting approvals from (none for other events). */
async function pausedJournal(
  message: Pick<WebhookMessage, 'event'>,
  task: TaskRecord | null,
  store: WebhookBodyStore,
  signal: AbortSignal | undefined,
): Promise<ViewJournal | CorruptTask | null> {
  if (message.event !== 'task.paused' || task === null) return null;
  // Its summary and the request rows it names (ADR 0035), not the whole journal.
  return readSummaryForView(store, task, { signal });
}

async function batchData(
  message: Pick<WebhookMessage, 'batchId'>,
  options: { readonly store: WebhookBodyStore; readonly signal?: AbortSignal },
): Promise<BatchWebhookData> {
  const batchId = message.batchId ?? '';
  // Read at the first attempt, after the last task ended: the counts are final (ended tasks do not change).
  const batch = await options.store.getBatch(batchId, { signal: options.signal });
  if (batch === null) return { batch_id: batchId, size: 0, counts: emptyCounts(), task_ids: [] };
  return { batch_id: batch.id, size: batch.size, counts: batch.counts, task_ids: batch.taskIds };
}

function emptyCounts(): Record<TaskStatus, number> {
  return { pending: 0, running: 0, paused: 0, succeeded: 0, failed: 0, cancelled: 0 };
}
