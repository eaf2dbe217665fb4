import type { FastifyInstance } from 'fastify';
import type { Authenticate } from '../spec/index.ts';
import type { Metrics } from './create-metrics.ts';
import { checkScraper } from './metrics-access.ts';

export interface MetricsRouteOptions {
  /** The API's authenticator: without it (no-auth mode) the scrape is open, as every request is. */
  readonly authenticate?: Authenticate;
  /** A bearer token that may scrape besides admin keys (config `metricsToken`). */
  readonly token?: string | null;
}

/**
 * `GET /metrics` (Prometheus text), plus hooks counting every HTTP response by route and status, and HTTP errors
 * by their envelope's code. Call it before the routes are registered so the hooks apply to all of them. The
 * totals span every tenant: with auth on, only the metrics token or an admin key may read them (ADR 0032).
 */
export function registerMetricsRoute(
  app: FastifyInstance,
  metrics: Metrics,
  options: MetricsRouteOptions = {},
): void {
  const check = checkScraper(options);
  app.addHook('onSend', async (_request, reply, payload) => {
    if (reply.statusCode >= 400 && typeof payload === 'string')
      metrics.countError('http', errorCode(payload));
    return payload;
  });
  app.addHook('onResponse', async (request, reply) => {
    metrics.observeHttp({
      // The route's pattern, not the URL: one series per route however many task ids there are.
      route: request.routeOptions.url ?? 'unmatched',
      method: request.method,
      statusCode: reply.statusCode,
      seconds: reply.elapsedTime / 1000,
    });
  });
  // In a plugin of its own, so an OpenAPI document registered before it sees the route.
  void app.register((scope, _options, done) => {
    scope.get('/metrics', async (request, reply) => {
      await check(request.headers.authorization);
      const text = await metrics.registry.metrics();
      return reply.type(metrics.registry.contentType).send(text);
    });
    done();
  });
}

/** The code of an error envelope (`{ error: { code } }`), else UNKNOWN. */
function errorCode(payload: string): string {
  try {
    const code = (JSON.parse(payload) as { error?: { code?: unknown } }).error?.code;
    return typeof code === 'string' ? code : 'UNKNOWN';
  } catch {
    return 'UNKNOWN';
  }
}
