import type { FastifyInstance } from 'fastify';
import { CodecallError } from '../errors/index.ts';
import type { TaskStore } from '../spec/index.ts';
import { listedTenant } from './principal.ts';
import { statsOverview } from './stats-overview.ts';
import type { StatsOverview } from './stats-overview.ts';
import { idSchema } from './task-schemas.ts';

/** The window's length in seconds: a minute to a day, an hour by default. */
export const STATS_WINDOW = { min: 60, max: 86_400, default: 3600 } as const;
/** An answer is reused this long for the same scope and window: dashboards poll, and one read serves them all. */
const REUSE_MS = 2000;
const MAX_REUSED = 256;

export interface StatsRouteOptions {
  readonly store: TaskStore;
  /** The clock (tests); default Date.now. */
  readonly now?: () => number;
}

/**
 * GET /api/v1/stats/overview (ADR 0054): the operator's view of the service from its store, so every node of a
 * PostgreSQL deployment answers for the whole service. Scoped like a listing: a member's tenant, an admin's all
 * (or the one named). Registered only over a store with `readStats`.
 */
export function registerStatsRoute(app: FastifyInstance, options: StatsRouteOptions): void {
  const { store } = options;
  const readStats = store.readStats?.bind(store);
  if (readStats === undefined) return;
  const now = options.now ?? Date.now;
  const reused = new Map<string, { at: number; answer: Promise<StatsOverview> }>();
  app.get<{ Querystring: { window?: string; tenant?: string } }>(
    '/api/v1/stats/overview',
    {
      schema: {
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { window: { type: 'string', pattern: '^[0-9]{1,6}$' }, tenant: idSchema },
        },
      },
    },
    async (request) => {
      const tenant = listedTenant(request.principal, request.query.tenant);
      const windowSeconds = windowOf(request.query.window);
      const key = `${windowSeconds}\u0000${tenant ?? ''}`;
      const at = now();
      const kept = reused.get(key);
      if (kept !== undefined && at - kept.at < REUSE_MS) return kept.answer;
      if (reused.size >= MAX_REUSED) reused.clear();
      const answer = readStats({
        since: at - windowSeconds * 1000,
        ...(tenant === undefined ? {} : { tenant }),
      }).then((stats) => statsOverview(stats, { now: at, windowSeconds, tenant: tenant ?? null }));
      reused.set(key, { at, answer });
      // A failed read is not kept: the next poll tries again.
      answer.catch(() => {
        if (reused.get(key)?.answer === answer) reused.delete(key);
      });
      return answer;
    },
  );
}

function windowOf(raw: string | undefined): number {
  if (raw === undefined) return STATS_WINDOW.default;
  const n = Number(raw);
  if (n < STATS_WINDOW.min || n > STATS_WINDOW.max) {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `window must be from ${STATS_WINDOW.min} to ${STATS_WINDOW.max} seconds, not ${n}`,
      { details: { field: 'window' } },
    );
  }
  return n;
}
