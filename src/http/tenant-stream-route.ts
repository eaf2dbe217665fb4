import type { FastifyInstance } from 'fastify';
import { isCorruptTask, isTerminal, readTaskForView } from '../spec/index.ts';
import type { CorruptTask, TaskChange, TaskRecord, TaskStatus, TaskStore } from '../spec/index.ts';
import { corruptItem, corruptItemOfView } from '../api/index.ts';
import { listedTenant } from './principal.ts';
import { sseOpener } from './sse-stream.ts';
import type { SseSettings } from './sse-stream.ts';
import { idSchema } from './task-schemas.ts';
import { listItem } from './task-list-item.ts';
import type { Runtime, TaskView } from '../api/index.ts';
import type { ChangeFeed } from './change-feed.ts';

const ACTIVE: readonly TaskStatus[] = ['pending', 'running', 'paused'];
/** Unfinished tasks listed per status when the stream opens (what it was told of them). */
const ACTIVE_CAP = 1000;
/** Finished tasks a stream remembers having told, so the feed's later word of the same change is not told again. */
const ENDED_CAP = 1000;

const stamp = (t: TaskRecord | CorruptTask): string =>
  isCorruptTask(t)
    ? `corrupt/${t.status}/${t.updatedAt}`
    : `${t.status}/${t.pauseReason ?? ''}/${t.updatedAt}`;
const stampOfChange = (c: TaskChange): string => `${c.status}/${c.pauseReason ?? ''}/${c.updatedAt}`;

/**
 * `GET /api/v1/task-events`: Server-Sent Events of every task the caller may see (its tenant; an admin every tenant
 * or the one named): `ready` once subscribed (list the tasks after it and no change is missed), then a `task`
 * event with the task's view (as GET /api/v1/tasks lists it) at each status change. Changes made here come as
 * they happen; those of other processes from the server's change feed (one store query per tick for every
 * stream), and only a task whose status changed from what the stream told is re-read. A change of a task
 * the store cannot read as written (its row, or a paused task's journal) is told as a `corrupt` event instead (the
 * list's `corrupt` item), never failing the stream: the list read after `ready` flags those already corrupt.
 */
export function registerTenantStreamRoute(app: FastifyInstance, options: TenantStreamRouteOptions): void {
  const { runtime, store, feed, streams } = options;
  const openSse = sseOpener(app, streams);
  app.get<{ Querystring: { tenant?: string } }>(
    '/api/v1/task-events',
    {
      schema: {
        querystring: { type: 'object', additionalProperties: false, properties: { tenant: idSchema } },
      },
    },
    async (request, reply) => {
      const tenant = listedTenant(request.principal, request.query.tenant);
      const visible = (t: { readonly tenant: string }): boolean =>
        tenant === undefined || t.tenant === tenant;
      const active = async (): Promise<(TaskRecord | CorruptTask)[]> =>
        (
          await Promise.all(
            ACTIVE.map((status) =>
              store.listTasks({ status, limit: ACTIVE_CAP, ...(tenant === undefined ? {} : { tenant }) }),
            ),
          )
        ).flatMap((p) => [...p.tasks, ...(p.corrupt ?? [])]);
      // What the client was last told of each unfinished task; a finished one is told once and forgotten.
      const told = new Map<string, string>();
      const ended = new Map<string, string>();
      const toldOf = (id: string): string | undefined => told.get(id) ?? ended.get(id);
      const idOf = (t: TaskRecord | CorruptTask): string => (isCorruptTask(t) ? t.taskId : t.id);
      for (const t of await active()) told.set(idOf(t), stamp(t));
      const sse = openSse(request, reply);
      const { send } = sse;
      // A view of a paused task carries what it waits for (its journal), as in the list.
      const viewOf = async (t: TaskRecord): Promise<TaskView | null> =>
        t.status === 'paused' ? runtime.get(t.id) : runtime.view(t);
      const tell = async (t: TaskRecord | CorruptTask): Promise<void> => {
        const now = stamp(t);
        const id = idOf(t);
        if (!visible(t) || toldOf(id) === now) return;
        // A task made after the last revocation check is told once the key is known to be live still: a key
        // revoked elsewhere never sees what was created after its revocation.
        if (!isCorruptTask(t) && request.principal.keyId !== null) {
          await streams?.revocations.confirmedSince(Date.parse(t.createdAt));
        }
        const view = isCorruptTask(t) ? null : await viewOf(t);
        if (!sse.open || (!isCorruptTask(t) && !view)) return;
        if (isTerminal(t.status)) {
          told.delete(id);
          ended.set(id, now);
          if (ended.size > ENDED_CAP) ended.delete(ended.keys().next().value ?? id);
        } else told.set(id, now);
        // A paused task's journal may be what is broken: its view says so, and it is told as corrupt.
        if (isCorruptTask(t)) send('corrupt', corruptItem(t));
        else if (view?.corrupt) send('corrupt', corruptItemOfView(view));
        else send('task', view && listItem(view));
      };
      // One change at a time, in order, whether an event or the feed's store query noticed it first.
      let chain = Promise.resolve();
      const queue = (work: () => Promise<void>): void => {
        chain = chain.then(async () => (sse.open ? work() : undefined)).catch(() => undefined);
      };
      const reread = (taskId: string): void =>
        queue(async () => {
          const t = await readTaskForView(store, taskId);
          if (t) await tell(t);
        });
      const off = feed.watch('*', (e) => {
        if (e.type === 'status') reread(e.taskId);
        // A change the store told of (a journal entry, another process): re-read only if its status is news.
        else if (e.type === 'changed' && visible(e.change) && toldOf(e.taskId) !== stampOfChange(e.change)) {
          reread(e.taskId);
        }
      });
      sse.onEnd(off);
      // `ready` first, once the feed's cursor is known: a change made elsewhere after it is told.
      queue(async () => {
        await feed.ready();
        send('ready', { tenant: tenant ?? null });
      });
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
