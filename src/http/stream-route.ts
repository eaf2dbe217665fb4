import type { FastifyInstance } from 'fastify';
import { CodecallError } from '../errors/index.ts';
import { isTerminal } from '../spec/index.ts';
import type { JournalEntry, TaskStore } from '../spec/index.ts';
import { sseOpener } from './sse-stream.ts';
import type { SseSettings } from './sse-stream.ts';
import { visibleTask } from './task-routes.ts';
import type { Runtime, RuntimeEvent } from '../api/index.ts';

/** A task run by another process sends this one no events: its view is re-read this often. */
const REFRESH_MS = 1000;

/**
 * `GET /api/v1/tasks/{id}/stream`: Server-Sent Events of one task: the current view first (`view`), then status
 * changes (with the new view), log lines and journal entries (tool calls, outcomes, decisions) as they happen;
 * the stream ends after the task's end. Logs and journal entries come from this process's runtime; status changes
 * of a task running elsewhere are seen by re-reading its view every second. Closing the server ends every stream.
 */
export function registerStreamRoute(
  app: FastifyInstance,
  runtime: Runtime,
  store: TaskStore,
  streams?: SseSettings,
): void {
  const openSse = sseOpener(app, streams);
  app.get<{ Params: { id: string } }>('/api/v1/tasks/:id/stream', async (request, reply) => {
    const taskId = request.params.id;
    await visibleTask(store, request, taskId);
    const first = await runtime.get(taskId);
    if (!first) throw new CodecallError('NOT_FOUND', `no task ${taskId}`);
    const sse = openSse(request, reply);
    const { send, end } = sse;
    // Status changes are sent as the whole new view, read in order and only when it changed, so a client never
    // sees them out of order or twice, whether an event or the re-read noticed first.
    let chain = Promise.resolve();
    let last = `${first.status}/${first.pause_reason ?? ''}/${first.updated_at}`;
    // Journal entries are sent once each, in seq order, from after the first view's checkpoint.
    let sentSeq = first.progress.journal_entries;
    const sendEntries = (entries: readonly JournalEntry[]): void => {
      const fresh = entries.filter((x) => x.seq > sentSeq);
      if (fresh.length === 0) return;
      sentSeq = fresh.at(-1)?.seq ?? sentSeq;
      send(
        'journal',
        fresh.map((x) => ({ seq: x.seq, type: x.type, data: x.data, created_at: x.createdAt })),
      );
    };
    const refresh = (): void => {
      chain = chain.then(async () => {
        if (!sse.open) return;
        // Entries written with a status change (a decision, a control action) or by another process come no
        // other way.
        sendEntries(await store.readJournal(taskId, { afterSeq: sentSeq }).catch(() => []));
        const view = await runtime.get(taskId).catch(() => null);
        if (!view) return;
        const now = `${view.status}/${view.pause_reason ?? ''}/${view.updated_at}`;
        if (now !== last) {
          last = now;
          send('status', view);
        }
        if (isTerminal(view.status)) end();
      });
    };
    const off = runtime.subscribe(taskId, (e: RuntimeEvent) => {
      if (e.type === 'log') send('log', { level: e.level, message: e.message });
      else if (e.type === 'journal') {
        // A gap (entries that came with a status change) is filled from the store, in order.
        if ((e.entries[0]?.seq ?? 0) <= sentSeq + 1) sendEntries(e.entries);
        else refresh();
      } else refresh();
    });
    const poll = setInterval(refresh, REFRESH_MS);
    poll.unref();
    sse.onEnd(() => {
      off();
      clearInterval(poll);
    });
    // What it printed before this stream (read in the same turn as the subscription: nothing twice or lost).
    const earlier = [...runtime.liveLogs(taskId)];
    send('view', first);
    for (const entry of earlier) send('log', { level: entry.level, message: entry.message });
    if (isTerminal(first.status)) end();
    // The task may have moved between the first read and the subscription.
    else refresh();
  });
}
