import type { FastifyInstance } from 'fastify';
import { CodecallError } from '../errors/index.ts';
import { isCorruptTask } from '../spec/index.ts';
import type { CorruptTask, TaskRecord, TaskStore } from '../spec/index.ts';
import { corruptItem } from '../api/index.ts';
import { listedTenant } from './principal.ts';
import { sseOpener } from './sse-stream.ts';
import type { SseSettings } from './sse-stream.ts';
import { streamCursor } from './stream-cursor.ts';
import { idSchema } from './task-schemas.ts';
import type { Runtime } from '../api/index.ts';
import type { ChangeFeed } from './change-feed.ts';

/**
 * Status changes read from the store at a time: a resume after a long gap costs a page (each row with its program
 * of up to maxCodeBytes), each task told once the socket took the one before.
 */
export const TASK_EVENTS_PAGE = 20;

/**
 * `GET /api/v1/task-events`: Server-Sent Events of every task the caller may see (its tenant; an admin every tenant
 * or the one named): `ready` once subscribed, then a `task` event with the task's list item (as GET /api/v1/tasks
 * lists it) at each status change, or `corrupt` (the list's `corrupt` item) for a task the store cannot read as
 * written. Every event carries an `id:`, the store's status change cursor (`readStatusChanges`): the stream tells
 * the tasks whose status changed after its cursor, in that order, each once at its latest. A client that
 * reconnects with its last id (`Last-Event-ID`, or `?after=`) gets `ready` with `resumed: true` and exactly the
 * changes after it, nothing lost and nothing repeated; a fresh stream's `ready` carries the cursor of now (list the
 * tasks after it and no change is missed). The store is asked again whenever the server's change feed tells of a
 * change (this process's at once, another's by the feed's tick), one query per stream, not per task.
 */
export function registerTenantStreamRoute(app: FastifyInstance, options: TenantStreamRouteOptions): void {
  const { runtime, store, feed, streams } = options;
  const openSse = sseOpener(app, streams);
  app.get<{ Querystring: { tenant?: string; after?: string } }>(
    '/api/v1/task-events',
    {
      schema: {
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { tenant: idSchema, after: { type: 'string', maxLength: 32 } },
        },
      },
    },
    async (request, reply) => {
      const tenant = listedTenant(request.principal, request.query.tenant);
      // A cursor that is not one is a 400 before any SSE header.
      const resumeAfter = streamCursor(request, request.query.after, 'a task-events cursor');
      const readStatusChanges = store.readStatusChanges?.bind(store);
      if (readStatusChanges === undefined) {
        throw new CodecallError('STORE_ERROR', 'this store cannot tell status changes (readStatusChanges)');
      }
      const byTenant = tenant === undefined ? {} : { tenant };
      const sse = openSse(request, reply);
      // Subscribed before the cursor of now is read: a change committed after it is told by the feed.
      let pending = false;
      let chain = Promise.resolve();
      const kick = (): void => {
        if (pending || !sse.open) return;
        pending = true;
        chain = chain
          .then(async () => {
            pending = false;
            await catchUp();
          })
          .catch(() => undefined);
      };
      // The cursor of what was told (the id of the last event): every status change up to it was.
      let sent = 0;
      const off = feed.watch('*', (e) => {
        if (e.type === 'status') kick();
        else if (
          e.type === 'changed' &&
          (tenant === undefined || e.change.tenant === tenant) &&
          e.change.statusSeq > sent
        ) {
          kick();
        }
      });
      sse.onEnd(off);
      const tell = async (t: TaskRecord | CorruptTask, seq: number): Promise<void> => {
        // A task made after the last revocation check is told once the key is known to be live still: a key
        // revoked elsewhere never sees what was created after its revocation.
        if (!isCorruptTask(t) && request.principal.keyId !== null) {
          await streams?.revocations.confirmedSince(Date.parse(t.createdAt));
        }
        // As in the list: a paused task's item carries what it waits for (its journal), and a broken journal
        // makes it a corrupt item.
        const item = isCorruptTask(t)
          ? { corrupt: corruptItem(t) }
          : await runtime.listItem(t).catch(() => null);
        if (!sse.open) return;
        sent = seq;
        const id = String(seq);
        if (item === null) return;
        if ('corrupt' in item) sse.send('corrupt', item.corrupt, id);
        else sse.send('task', item.task, id);
      };
      // Every status change after `sent`, a page at a time, each told once the socket took the one before.
      const catchUp = async (): Promise<void> => {
        for (;;) {
          if (!sse.open) return;
          const page = await readStatusChanges({ after: sent, limit: TASK_EVENTS_PAGE, ...byTenant });
          for (const { seq, task } of page.tasks) {
            if (!sse.open) return;
            await sse.drained();
            await tell(task, seq);
          }
          if (page.tasks.length < TASK_EVENTS_PAGE) return;
        }
      };
      chain = chain.then(async () => {
        // Once the feed's own cursor is known, so a change of another process after `now` reaches the feed.
        await feed.ready();
        const now = (await readStatusChanges({ after: null })).cursor;
        // A cursor past the end (another database, a restart from a backup) cannot have been sent: taken as the
        // end, so changes made later are not skipped. The feed is the tasks table itself, never pruned: any cursor
        // up to the end is served (a long gap is read in pages).
        sent = Math.min(resumeAfter ?? now, now);
        if (!sse.open) return;
        sse.send('ready', { tenant: tenant ?? null, resumed: resumeAfter !== undefined }, String(sent));
        await catchUp();
      });
      chain = chain.catch(() => sse.end());
    },
  );
}

export interface TenantStreamRouteOptions {
  readonly runtime: Runtime;
  readonly store: TaskStore;
  /** The server's change feed: runtime events and changes made by other processes. */
  readonly feed: ChangeFeed;
  readonly streams?: SseSettings;
}
