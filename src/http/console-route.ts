import { sep } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { CONSOLE_NOT_BUILT, consoleBuilt } from './console-files.ts';
import type { ConsoleOptions } from './console-files.ts';

export { CONSOLE_NOT_BUILT, DEFAULT_CONSOLE_ROOT, consoleBuilt } from './console-files.ts';
export type { ConsoleOptions } from './console-files.ts';

/** No inline script or style, nothing from another origin, never framed, no referrer sent on. */
const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; " +
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
};

/**
 * The web console's static files at `/` (public: the key is pasted in the page and only the API checks it).
 * Only the files present at start are served (no wildcard route), so every other path stays the API's 404.
 * Without a build, `/` says how to make one.
 */
export function registerConsole(app: FastifyInstance, options: ConsoleOptions): void {
  void app.register(async (scope) => {
    scope.addHook('onSend', async (_request, reply) => {
      for (const [name, value] of Object.entries(SECURITY_HEADERS)) void reply.header(name, value);
    });
    if (!consoleBuilt(options.root)) {
      scope.get('/', { schema: { hide: true } }, (_request, reply) =>
        reply.status(503).type('text/plain; charset=utf-8').send(`${CONSOLE_NOT_BUILT}\n`),
      );
      return;
    }
    await scope.register(fastifyStatic, {
      root: options.root,
      wildcard: false,
      index: 'index.html',
      decorateReply: false,
      // Hashed asset names change with their content; the page itself must always be asked for again.
      setHeaders: (reply, path) => {
        void reply.header(
          'cache-control',
          path.includes(`${sep}assets${sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache',
        );
      },
    });
  });
}
