import type { FastifyInstance } from 'fastify';
import { isCorruptTask, isTerminal, readTaskForView } from '../spec/index.ts';
import type { CorruptTask, TaskRecord, TaskStatus, TaskStore } from '../spec/index.ts';
import { corruptItem, corruptItemOfView } from '../api/index.ts';
import { listedTenant } from './principal.ts';
import { sseOpener } from './sse-stream.ts';
import type { SseSettings } from './sse-stream.ts';
import { idSchema } from './task-schemas.ts';
import type { Runtime, TaskView } from '../api/index.ts';

/** Tasks run by another process send this one no events: the unfinished ones are re-listed this often. */
const REFRESH_MS = 2000;
const ACTIVE: readonly TaskStatus[] = ['pending', 'running', 'paused'];
/** Unfinished tasks re-listed per status; past it, another process's changes show on the next event only. */
const ACTIVE_CAP = 1000;

const stamp = (t: TaskRecord | CorruptTask): string =>
  isCorruptTask(t)
    ? `corrupt/${t.status}/${t.updatedAt}`
    : `${t.status}/${t.pauseReason ?? ''}/${t.updatedAt}`;

/**
 * `GET /api/v1/task-events`: Server-Sent Events of every task the caller may see (its tenant; an admin every tenant
 * or the one named): `ready` once subscribed (list the tasks after it and no change is missed), then a `task`
 * event with the task's view (as GET /api/v1/tasks lists it) at each status change. Changes made here come as
 * they happen; those of other processes by re-listing the unfinished tasks every two seconds. A change of a task
 * the store cannot read as written (its row, or a paused task's journal) is told as a `corrupt` event instead (the
 * list's `corrupt` item), never failing the stream: the list read after `ready` flags those already corrupt.
 */
export function registerTenantStreamRoute(
  app: FastifyInstance,
  runtime: Runtime,
  store: TaskStore,
  streams?: SseSettings,
): void {
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
      const visible = (t: TaskRecord | CorruptTask): boolean => tenant === undefined || t.tenant === tenant;
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
        if (!visible(t) || told.get(id) === now) return;
        // A task made after the last revocation check is told once the key is known to be live still: a key
        // revoked elsewhere never sees what was created after its revocation.
        if (!isCorruptTask(t) && request.principal.keyId !== null) {
          await streams?.revocations.confirmedSince(Date.parse(t.createdAt));
        }
        const view = isCorruptTask(t) ? null : await viewOf(t);
        if (!sse.open || (!isCorruptTask(t) && !view)) return;
        if (isTerminal(t.status)) told.delete(id);
        else told.set(id, now);
        // A paused task's journal may be what is broken: its view says so, and it is told as corrupt.
        if (isCorruptTask(t)) send('corrupt', corruptItem(t));
        else if (view?.corrupt) send('corrupt', corruptItemOfView(view));
        else send('task', view);
      };
      // One change at a time, in order, whether an event or the re-listing noticed it first.
      let chain = Promise.resolve();
      const queue = (work: () => Promise<void>): void => {
        chain = chain.then(async () => (sse.open ? work() : undefined)).catch(() => undefined);
      };
      const off = runtime.subscribe('*', (e) => {
        if (e.type !== 'status') return;
        queue(async () => {
          const t = await readTaskForView(store, e.taskId);
          if (t) await tell(t);
        });
      });
      const refresh = (): void =>
        queue(async () => {
          const now = await active();
          const seen = new Set(now.map(idOf));
          for (const t of now) await tell(t);
          // An unfinished task no longer listed as one has ended elsewhere.
          for (const id of [...told.keys()].filter((x) => !seen.has(x))) {
            const t = await readTaskForView(store, id);
            if (t) await tell(t);
            else told.delete(id);
          }
        });
      const poll = setInterval(refresh, REFRESH_MS);
      poll.unref();
      sse.onEnd(() => {
        off();
        clearInterval(poll);
      });
      send('ready', { tenant: tenant ?? null });
    },
  );
}
