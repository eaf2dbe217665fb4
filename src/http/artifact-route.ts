import { extname } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { CodecallError } from '../errors/index.ts';
import { isArtifactStore } from '../spec/index.ts';
import type { TaskStore } from '../spec/index.ts';
import { idSchema } from './task-schemas.ts';
import { visibleTask } from './task-routes.ts';

const TYPES: Readonly<Record<string, string>> = {
  '.csv': 'text/csv; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.pdf': 'application/pdf',
  '.html': 'text/html; charset=utf-8',
  '.parquet': 'application/vnd.apache.parquet',
};

/** GET /api/v1/tasks/{id}/artifacts/{name}: a file the task's program left in its working directory. */
export function registerArtifactRoute(app: FastifyInstance, store: TaskStore): void {
  app.get<{ Params: { id: string; name: string } }>(
    '/api/v1/tasks/:id/artifacts/:name',
    {
      schema: {
        params: { type: 'object', properties: { id: idSchema, name: { type: 'string', minLength: 1 } } },
      },
    },
    async (request, reply) => {
      const { id, name } = request.params;
      await visibleTask(store, request, id);
      const data = isArtifactStore(store) ? await store.readArtifact(id, name) : null;
      if (!data) {
        throw new CodecallError('NOT_FOUND', `task ${id} has no artifact ${JSON.stringify(name)}`, {
          details: { task_id: id, name },
        });
      }
      // Served as a download, never rendered in the API's origin (an SVG or HTML file could carry script).
      void reply
        .type(TYPES[extname(name).toLowerCase()] ?? 'application/octet-stream')
        .header(
          'content-disposition',
          `attachment; filename*=UTF-8''${encodeURIComponent(name.split('/').at(-1) ?? name)}`,
        )
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', "default-src 'none'; sandbox");
      return reply.send(Buffer.from(data));
    },
  );
}
