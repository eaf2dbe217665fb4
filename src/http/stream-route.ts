import type { FastifyInstance } from 'fastify';
import { CodecallError } from '../errors/index.ts';
import { JOURNAL_PAGE_BYTES, isTerminal } from '../spec/index.ts';
import type { JournalEntry, TaskStore } from '../spec/index.ts';
import { sseOpener } from './sse-stream.ts';
import type { SseSettings } from './sse-stream.ts';
import { streamCursor } from './stream-cursor.ts';
import { visibleTask } from './task-routes.ts';
import type { Runtime } from '../api/index.ts';
import type { ChangeFeed, FeedEvent } from './change-feed.ts';
/** Journal entries read from the store at a time (a resume after a long gap, a huge journal). */
export const STREAM_PAGE = 200;
/** A page is sent as events of about this size at most, each once the socket took the one before. */
const EVENT_BYTES = 64 * 1024;

/**
 * `GET /api/v1/tasks/{id}/stream`: Server-Sent Events of one task: the current view first (`view`), then status
 * changes (with the new view), log lines and journal entries (tool calls, outcomes, decisions) as they happen;
 * the stream ends after the task's end. Every event carries an `id:`, the last journal seq sent: a client that
 * reconnects with it (`Last-Event-ID`, or `?after=`) gets the view, then exactly the journal entries after it
 * (read in pages), then live events; log lines are live only. Logs and journal entries come from this process's
 * runtime; changes of a task running elsewhere come from the server's change feed (one store query per tick for
 * every stream), after which the stream re-reads its task. Closing the server ends every stream.
 */
export function registerStreamRoute(app: FastifyInstance, options: StreamRouteOptions): void {
  const { runtime, store, feed } = options;
  const openSse = sseOpener(app, options.streams);
  app.get<{ Params: { id: string }; Querystring: { after?: string } }>(
    '/api/v1/tasks/:id/stream',
    {
      schema: {
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { after: { type: 'string', maxLength: 32 } },
        },
      },
    },
    async (request, reply) => {
      const taskId = request.params.id;
      const cursor = streamCursor(request, request.query.after);
      await visibleTask(store, request, taskId);
      const first = await runtime.get(taskId);
      if (!first) throw new CodecallError('NOT_FOUND', `no task ${taskId}`);
      const sse = openSse(request, reply);
      const { end } = sse;
      // Journal entries are sent once each, in seq order, from after the cursor (or the first view's checkpoint).
      // A cursor past the journal's end cannot have been sent: it is taken as the end, so entries written later
      // are not skipped.
      let sentSeq = Math.min(cursor ?? Infinity, first.progress.journal_entries);
      const send = (event: string, data: unknown): void => sse.send(event, data, String(sentSeq));
      const sendEntries = (entries: readonly JournalEntry[]): void => {
        const fresh = entries.filter((x) => x.seq > sentSeq);
        if (fresh.length === 0) return;
        sentSeq = fresh.at(-1)?.seq ?? sentSeq;
        send(
          'journal',
          fresh.map((x) => ({ seq: x.seq, type: x.type, data: x.data, created_at: x.createdAt })),
        );
      };
      // Everything the store has after what was sent, a page at a time, in events the client takes one by one: a
      // long backlog costs a page of memory, and a client reading it is not taken for a slow one.
      // A page is bounded by bytes too: 200 entries of 1 MiB read at once would block the loop for seconds.
      const catchUp = async (): Promise<void> => {
        for (;;) {
          if (!sse.open) return;
          const { entries: page, more } = await store
            .readJournalPage(taskId, { afterSeq: sentSeq, limit: STREAM_PAGE, maxBytes: JOURNAL_PAGE_BYTES })
            .catch(() => ({ entries: [], more: false }));
          for (let i = 0; i < page.length;) {
            let bytes = 0;
            let j = i;
            while (j < page.length && (j === i || bytes < EVENT_BYTES)) bytes += sizeOf(page[j++]);
            await sse.drained();
            sendEntries(page.slice(i, j));
            i = j;
          }
          if (!more || page.length === 0) return;
        }
      };
      // Status changes are sent as the whole new view, read in order and only when it changed, so a client never
      // sees them out of order or twice, whether an event or the re-read noticed first.
      // The first re-read waits for the feed's cursor: a change made elsewhere after it is told by the feed.
      let chain = feed.ready().catch(() => undefined);
      let last = `${first.status}/${first.pause_reason ?? ''}/${first.updated_at}`;
      const refresh = (): void => {
        chain = chain.then(async () => {
          if (!sse.open) return;
          // The view first: the entries read after it cover at least its checkpoint, so a terminal view is sent
          // after the whole journal. Entries written with a status change (a decision, a control action) or by
          // another process come no other way.
          const view = await runtime.get(taskId).catch(() => null);
          await catchUp();
          if (!view || !sse.open) return;
          const now = `${view.status}/${view.pause_reason ?? ''}/${view.updated_at}`;
          if (now !== last) {
            last = now;
            send('status', view);
          }
          if (isTerminal(view.status)) end();
        });
      };
      const off = feed.watch(taskId, (e: FeedEvent) => {
        if (e.type === 'log') send('log', { level: e.level, message: e.message });
        else if (e.type === 'journal') {
          // A gap (entries that came with a status change, or a resume still catching up) is filled from the
          // store, in order.
          if ((e.entries[0]?.seq ?? 0) <= sentSeq + 1) sendEntries(e.entries);
          else refresh();
        } else if (e.type === 'changed') {
          // The store's word of a change this stream has seen already (its own process's) costs no read.
          const c = e.change;
          const seen = `${c.status}/${c.pauseReason ?? ''}/${c.updatedAt}` === last;
          if (!seen || c.journalEntries > sentSeq) refresh();
        } else refresh();
      });
      sse.onEnd(off);
      // What it printed before this stream (read in the same turn as the subscription: nothing twice or lost). A
      // resumed stream had them already.
      const earlier = cursor === undefined ? [...runtime.liveLogs(taskId)] : [];
      send('view', first);
      for (const entry of earlier) send('log', { level: entry.level, message: entry.message });
      // The task may have moved between the first read and the subscription; a resume catches up first.
      refresh();
    },
  );
}

export interface StreamRouteOptions {
  readonly runtime: Runtime;
  readonly store: TaskStore;
  /** The server's change feed: runtime events and changes made by other processes. */
  readonly feed: ChangeFeed;
  readonly streams?: SseSettings;
}

/** About what an entry weighs on the wire (its data is most of it). */
function sizeOf(entry: JournalEntry | undefined): number {
  return entry === undefined ? 0 : 64 + JSON.stringify(entry.data).length;
}
