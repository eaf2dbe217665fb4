// UsageStore conformance (ADR 0045): per-tenant token buckets and quotas, run against every store that keeps
// usage. Across servers: two stores on one database take concurrently and give out exactly the limit. Across
// restarts: a reopened store has what was left.
import { afterEach, describe, expect, it } from 'vitest';
import { ALL_TOOLS_KEY } from '../../src/spec/index.ts';
import type { BucketTerms, QuotaTerms, UsageRequest, UsageStore, UsageTaken } from '../../src/index.ts';
import { expectCode, T0 } from './task-store-support.ts';

export type ClosableUsageStore = UsageStore & { close(): Promise<void> };

export interface UsageStoreFixture {
  /** A store on a database of its own. */
  fresh(): Promise<ClosableUsageStore>;
  /** Another store on the database of `store` (another server, or the same one after a restart). */
  sibling(store: ClosableUsageStore): Promise<ClosableUsageStore>;
}

const HOUR = 3_600_000;

export function describeUsageStoreConformance(name: string, fixture: UsageStoreFixture): void {
  describe(`UsageStore conformance: ${name}`, () => {
    const open: ClosableUsageStore[] = [];
    afterEach(async () => {
      await Promise.all(open.splice(0).map((s) => s.close()));
    });
    const fresh = async (): Promise<ClosableUsageStore> => {
      const store = await fixture.fresh();
      open.push(store);
      return store;
    };
    const sibling = async (of: ClosableUsageStore): Promise<ClosableUsageStore> => {
      const store = await fixture.sibling(of);
      open.push(store);
      return store;
    };
    const take = (
      store: UsageStore,
      now: number,
      terms: { rate?: BucketTerms; quota?: QuotaTerms; tenant?: string; tool?: string },
    ): Promise<UsageTaken> => {
      const request: UsageRequest = { tenant: 'acme', tool: 'web.search', now, ...terms };
      return store.takeUsage(request);
    };
    const oks = (results: readonly UsageTaken[]): number => results.filter((r) => r.ok).length;

    it('gives a full bucket, then refuses with the time until the next token, refilled as time passes', async () => {
      const store = await fresh();
      const rate = { perSecond: 2, burst: 3 };
      for (let i = 0; i < 3; i++) expect(await take(store, T0, { rate })).toEqual({ ok: true });
      expect(await take(store, T0, { rate })).toEqual({
        ok: false,
        limit: 'rate',
        retryAfterMs: 500,
        tool: 'web.search',
      });
      expect(await take(store, T0 + 250, { rate })).toEqual({
        ok: false,
        limit: 'rate',
        retryAfterMs: 250,
        tool: 'web.search',
      });
      expect(await take(store, T0 + 500, { rate })).toEqual({ ok: true });
      // A long idle fills the bucket to its burst, no more.
      const later = T0 + 100 * HOUR;
      const taken = [];
      for (let i = 0; i < 5; i++) taken.push(await take(store, later, { rate }));
      expect(oks(taken)).toBe(3);
    });

    it('takes nothing for a refused call: refusals do not push the next token back', async () => {
      const store = await fresh();
      const rate = { perSecond: 1, burst: 1 };
      expect((await take(store, T0, { rate })).ok).toBe(true);
      for (const at of [100, 400, 900]) {
        expect(await take(store, T0 + at, { rate })).toEqual({
          ok: false,
          limit: 'rate',
          retryAfterMs: 1000 - at,
          tool: 'web.search',
        });
      }
      expect((await take(store, T0 + 1000, { rate })).ok).toBe(true);
    });

    it('refills a token per minute exactly after a minute (floating point)', async () => {
      const store = await fresh();
      const rate = { perSecond: 1 / 60, burst: 1 };
      expect((await take(store, T0, { rate })).ok).toBe(true);
      expect(await take(store, T0 + 59_000, { rate })).toMatchObject({ ok: false, retryAfterMs: 1000 });
      expect((await take(store, T0 + 60_000, { rate })).ok).toBe(true);
    });

    it('counts a quota per period and starts over in the next one', async () => {
      const store = await fresh();
      const quota = { max: 2, periodStart: T0, periodEnd: T0 + HOUR };
      expect((await take(store, T0 + 10, { quota })).ok).toBe(true);
      expect((await take(store, T0 + 20, { quota })).ok).toBe(true);
      expect(await take(store, T0 + 30, { quota })).toEqual({
        ok: false,
        limit: 'quota',
        retryAfterMs: HOUR - 30,
        tool: 'web.search',
      });
      const next = { max: 2, periodStart: T0 + HOUR, periodEnd: T0 + 2 * HOUR };
      expect((await take(store, T0 + HOUR, { quota: next })).ok).toBe(true);
      expect((await take(store, T0 + HOUR + 1, { quota: next })).ok).toBe(true);
      expect((await take(store, T0 + HOUR + 2, { quota: next })).ok).toBe(false);
    });

    it('is all or nothing: a quota that refuses keeps the token, a rate that refuses keeps the count', async () => {
      const store = await fresh();
      const rate = { perSecond: 1, burst: 1 };
      const quota = { max: 1, periodStart: T0, periodEnd: T0 + HOUR };
      expect((await take(store, T0, { rate, quota })).ok).toBe(true);
      expect(await take(store, T0 + 5000, { rate, quota })).toMatchObject({ ok: false, limit: 'quota' });
      // The quota's refusal gave the token back: exactly one is there.
      expect((await take(store, T0 + 5000, { rate })).ok).toBe(true);
      expect((await take(store, T0 + 5000, { rate })).ok).toBe(false);

      const other = { tool: 'web.fetch' };
      const two = { max: 2, periodStart: T0, periodEnd: T0 + HOUR };
      expect((await take(store, T0, { ...other, rate, quota: two })).ok).toBe(true);
      expect(await take(store, T0 + 10, { ...other, rate, quota: two })).toMatchObject({ limit: 'rate' });
      // The rate's refusal counted nothing: the quota's second call is still there.
      expect((await take(store, T0 + 1000, { ...other, rate, quota: two })).ok).toBe(true);
      expect(await take(store, T0 + 2000, { ...other, rate, quota: two })).toMatchObject({ limit: 'quota' });
    });

    it("keeps each tenant's and each tool's usage apart", async () => {
      const store = await fresh();
      const rate = { perSecond: 0.001, burst: 1 };
      expect((await take(store, T0, { rate })).ok).toBe(true);
      expect((await take(store, T0, { rate })).ok).toBe(false);
      expect((await take(store, T0, { rate, tenant: 'globex' })).ok).toBe(true);
      expect((await take(store, T0, { rate, tool: 'web.fetch' })).ok).toBe(true);
    });

    it('gives out exactly the limit to two servers taking at once, and a restarted one has what was left', async () => {
      const a = await fresh();
      const b = await sibling(a);
      const rate = { perSecond: 0.001, burst: 10 };
      const quota = { max: 7, periodStart: T0, periodEnd: T0 + HOUR };
      const buckets = await Promise.all(
        Array.from({ length: 24 }, (_, i) => take(i % 2 === 0 ? a : b, T0, { rate, tool: 'bucket.only' })),
      );
      expect(oks(buckets)).toBe(10);
      const counts = await Promise.all(
        Array.from({ length: 24 }, (_, i) => take(i % 2 === 0 ? a : b, T0, { quota, tool: 'quota.only' })),
      );
      expect(oks(counts)).toBe(7);

      const rest = { perSecond: 0.001, burst: 3 };
      expect((await take(a, T0, { rate: rest })).ok).toBe(true);
      expect((await take(a, T0, { rate: rest })).ok).toBe(true);
      await a.close();
      open.splice(open.indexOf(a), 1);
      const restarted = await sibling(b);
      expect((await take(restarted, T0 + 1, { rate: rest })).ok).toBe(true);
      expect((await take(restarted, T0 + 2, { rate: rest })).ok).toBe(false);
      expect((await take(restarted, T0 + 3, { quota, tool: 'quota.only' })).ok).toBe(false);
    });

    it("takes a tool's key and the tenant's all-tools key together, or neither", async () => {
      const store = await fresh();
      const all = { tool: ALL_TOOLS_KEY, rate: { perSecond: 0.001, burst: 3 } };
      const search = { perSecond: 0.001, burst: 2 };
      const at = (tool: string, rate?: BucketTerms): Promise<UsageTaken> =>
        store.takeUsage({ tenant: 'acme', tool, now: T0, ...(rate ? { rate } : {}), also: [all] });
      expect((await at('web.search', search)).ok).toBe(true);
      expect((await at('web.search', search)).ok).toBe(true);
      // The tool's bucket refuses: the all-tools key keeps its token.
      expect(await at('web.search', search)).toMatchObject({ ok: false, limit: 'rate', tool: 'web.search' });
      expect((await at('web.fetch')).ok).toBe(true);
      // The all-tools key refuses: the tool's key (here with a quota) counts nothing.
      const quota = { max: 1, periodStart: T0, periodEnd: T0 + HOUR };
      const refused = await store.takeUsage({
        tenant: 'acme',
        tool: 'db.query',
        now: T0,
        quota,
        also: [all],
      });
      expect(refused).toMatchObject({ ok: false, limit: 'rate', tool: ALL_TOOLS_KEY });
      expect((await store.takeUsage({ tenant: 'acme', tool: 'db.query', now: T0, quota })).ok).toBe(true);
      // Another tenant's all-tools key is its own.
      expect((await store.takeUsage({ tenant: 'globex', tool: 'web.fetch', now: T0, also: [all] })).ok).toBe(
        true,
      );
      // Both refuse: the longer wait is the one reported (the shorter would only be refused again).
      const hourly = { tool: ALL_TOOLS_KEY, quota: { max: 1, periodStart: T0, periodEnd: T0 + HOUR } };
      const perSecond = { perSecond: 1, burst: 1 };
      const both = (now: number): Promise<UsageTaken> =>
        store.takeUsage({ tenant: 'initech', tool: 'a.b', now, rate: perSecond, also: [hourly] });
      expect((await both(T0)).ok).toBe(true);
      expect(await both(T0 + 10)).toEqual({
        ok: false,
        limit: 'quota',
        retryAfterMs: HOUR - 10,
        tool: ALL_TOOLS_KEY,
      });
    });

    it('never gives out more than the all-tools limit to two servers taking for several tools at once', async () => {
      const a = await fresh();
      const b = await sibling(a);
      const all = {
        tool: ALL_TOOLS_KEY,
        rate: { perSecond: 0.001, burst: 9 },
        quota: { max: 7, periodStart: T0, periodEnd: T0 + HOUR },
      };
      const tools = ['web.search', 'web.fetch', 'db.query'];
      const own = { perSecond: 0.001, burst: 4 };
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          (i % 2 === 0 ? a : b).takeUsage({
            tenant: 'acme',
            tool: tools[i % 3] ?? 'web.search',
            now: T0,
            rate: own,
            also: [all],
          }),
        ),
      );
      // The quota (7) is the tighter of the all-tools key's; each tool's own 4 is not reached by all three.
      expect(oks(results)).toBe(7);
      // Nothing more was counted than was given: the all-tools quota has nothing left, each tool's bucket what
      // its admitted calls left.
      const left = await Promise.all(
        tools.map((tool) => a.takeUsage({ tenant: 'acme', tool, now: T0, rate: own })),
      );
      const given = tools.map((tool, t) => results.filter((r, i) => i % 3 === t && r.ok).length);
      expect(left.map((r) => r.ok)).toEqual(given.map((n) => n < 4));
      expect(await a.takeUsage({ tenant: 'acme', tool: 'x.y', now: T0, also: [all] })).toMatchObject({
        ok: false,
        tool: ALL_TOOLS_KEY,
      });
    });

    it('refuses an aborted signal and takes nothing', async () => {
      const store = await fresh();
      const rate = { perSecond: 0.001, burst: 1 };
      const controller = new AbortController();
      controller.abort();
      await expectCode(
        store.takeUsage({ tenant: 'acme', tool: 'web.search', now: T0, rate }, { signal: controller.signal }),
        'ABORTED',
      );
      expect((await take(store, T0, { rate })).ok).toBe(true);
    });
  });
}
