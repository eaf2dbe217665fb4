import { createRequire } from 'node:module';
import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { addRouteDocs } from './route-docs.ts';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

/**
 * The OpenAPI 3.1 document, generated from the route schemas, served as JSON at `GET /api/v1/openapi.json` (no
 * UI, nothing fetched from a CDN). Only routes registered by plugins registered after this are in it: swagger
 * watches routes from when its plugin has loaded.
 */
export function registerOpenApi(app: FastifyInstance): void {
  addRouteDocs(app);
  void app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'codecall',
        version,
        description:
          'Durable, code-based tool calling: submit programs that call tools, steer and watch them.',
      },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <API key>' },
        },
      },
      security: [{ bearer: [] }],
    },
    // Shared schemas keep their $id as their name under components.schemas (TaskView, Error).
    refResolver: {
      buildLocalReference: (json, _base, _fragment, i) =>
        typeof json.$id === 'string' ? json.$id : `def-${i}`,
    },
  });
  void app.register((scope, _options, done) => {
    scope.get('/api/v1/openapi.json', () => app.swagger());
    done();
  });
}
