import type { FastifyInstance } from 'fastify';
import type { Runtime, RuntimeEvent } from '../durable/index.ts';
import { CodecallError } from '../errors/index.ts';
import { isTerminal } from '../spec/index.ts';
import type { TaskStore } from '../spec/index.ts';
import { visibleTask } from './task-routes.ts';

const HEARTBEAT_MS = 15_000;

/**
 * `GET /api/v1/tasks/{id}/stream`: Server-Sent Events of one task: the current view first (`view`), then status
 * changes (with the new view), log lines and journal entries (tool calls, outcomes, decisions) as they happen;
 * the stream ends after the task's end. Events come from this process's runtime.
 */
export function registerStreamRoute(app: FastifyInstance, runtime: Runtime, store: TaskStore): void {
  app.get<{ Params: { id: string } }>('/api/v1/tasks/:id/stream', async (request, reply) => {
    const taskId = request.params.id;
    await visibleTask(store, request, taskId);
    const first = await runtime.get(taskId);
    if (!first) throw new CodecallError('NOT_FOUND', `no task ${taskId}`);
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    let open = true;
    const send = (event: string, data: unknown): void => {
      if (open) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    };
    const end = (): void => {
      if (!open) return;
      open = false;
      off();
      clearInterval(heartbeat);
      res.end();
    };
    // Status changes are sent as the whole new view, read in order, so a client never sees them out of order.
    let chain = Promise.resolve();
    const off = runtime.subscribe(taskId, (e: RuntimeEvent) => {
      if (e.type === 'log') send('log', { level: e.level, message: e.message });
      else if (e.type === 'journal') {
        send(
          'journal',
          e.entries.map((x) => ({ seq: x.seq, type: x.type, data: x.data, created_at: x.createdAt })),
        );
      } else {
        chain = chain.then(async () => {
          const view = await runtime.get(taskId).catch(() => null);
          if (view) send('status', view);
          if (isTerminal(e.status)) end();
        });
      }
    });
    const heartbeat = setInterval(() => open && res.write(': keep-alive\n\n'), HEARTBEAT_MS);
    heartbeat.unref();
    request.raw.on('close', end);
    send('view', first);
    if (isTerminal(first.status)) end();
  });
}
