// The PostgreSQL store's health: the fault kinds of PostgreSQL's errors, the monitor, and real servers that are
// healthy, stopped, or read-only.
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CodecallError } from '../../src/errors/index.ts';
import type { StoreHealthEvent } from '../../src/spec/index.ts';
import { createPostgresTaskStore } from '../../src/store/postgres/create-postgres-task-store.ts';
import { pgFaultOf, toPgStoreFault } from '../../src/store/postgres/pg-faults.ts';
import { PgHealthMonitor } from '../../src/store/postgres/pg-health.ts';
import type { PostgresTaskStore } from '../../src/store/postgres/pg-task-store.ts';
import { codeInput, expectCode } from '../conformance/task-store-support.ts';
import { findPostgresBin, startPostgresCluster } from '../support/postgres-cluster.ts';
import type { PostgresCluster } from '../support/postgres-cluster.ts';
import { createTestPostgresStore, postgresSkipReason, postgresUrl } from '../support/postgres-store.ts';

const pgError = (code: string, message = `server says ${code}`): Error =>
  Object.assign(new Error(message), { code });

describe('PostgreSQL fault kinds', () => {
  it.each([
    ['25006', 'read_only'],
    ['42501', 'read_only'],
    ['53100', 'disk_full'],
    ['58030', 'io_error'],
    ['55P03', 'busy'],
    ['57014', 'busy'],
    ['XX001', 'corrupt'],
    ['XX002', 'corrupt'],
    ['53200', 'out_of_memory'],
    ['53300', 'cannot_open'],
    ['57P01', 'cannot_open'],
    ['57P03', 'cannot_open'],
    ['08006', 'cannot_open'],
    ['28P01', 'cannot_open'],
    ['3D000', 'cannot_open'],
    ['ECONNREFUSED', 'cannot_open'],
    ['EPIPE', 'cannot_open'],
    ['ENOTFOUND', 'cannot_open'],
  ])('%s is %s', (code, kind) => {
    expect(pgFaultOf(pgError(code))).toEqual({ kind, code });
  });

  it('knows lost connections by their message, and finds the code under a CodecallError', () => {
    expect(pgFaultOf(new Error('Connection terminated unexpectedly'))?.kind).toBe('cannot_open');
    expect(pgFaultOf(new Error('Connection terminated due to connection timeout'))?.kind).toBe('cannot_open');
    // pg-pool's wait for a free connection timed out: the server answers, every connection is busy.
    expect(pgFaultOf(new Error('timeout exceeded when trying to connect'))).toEqual({
      kind: 'busy',
      code: 'POOL_TIMEOUT',
    });
    const wrapped = new CodecallError('STORE_ERROR', 'PostgreSQL: x', { cause: pgError('53100') });
    expect(pgFaultOf(wrapped)).toEqual({ kind: 'disk_full', code: '53100' });
  });

  it.each(['23505', '40001', 'CC409', 'CC422', '42P01', '22P02'])('%s is no fault of the store', (code) => {
    expect(pgFaultOf(pgError(code))).toBeNull();
  });

  it('says what is wrong with which server and what to do', () => {
    const fault = toPgStoreFault(pgError('25006'), 'postgres://app:***@db.internal:5432/codecall', 7);
    expect(fault).toMatchObject({ kind: 'read_only', code: '25006', since: 7 });
    expect(fault?.message).toContain('postgres://app:***@db.internal:5432/codecall refuses writes');
    expect(fault?.message).toContain('hot standby');
    expect(toPgStoreFault(new CodecallError('NOT_FOUND', 'no task'), 's', 7)).toBeNull();
  });
});

describe('PostgreSQL health monitor', () => {
  function monitor(probe: () => Promise<void>, clock: { now: number }) {
    const events: StoreHealthEvent[] = [];
    const m = new PgHealthMonitor({
      server: 'postgres://db',
      probe,
      cacheMs: 1000,
      onHealth: (e) => events.push(e),
      clock: () => clock.now,
    });
    return { m, events };
  }

  it('shares one probe between concurrent checks and reuses its answer for cacheMs', async () => {
    const clock = { now: 1000 };
    let probes = 0;
    const { m } = monitor(async () => {
      probes++;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }, clock);
    await Promise.all([m.check(), m.check(), m.check()]);
    expect(probes).toBe(1);
    clock.now += 999;
    expect(await m.check()).toEqual({ ok: true, faults: [] });
    expect(probes).toBe(1);
    clock.now += 1;
    await m.check();
    expect(probes).toBe(2);
    await m.close();
  });

  it('reports every failure, each kind once, and a recovery; a failure during a probe outlives it', async () => {
    const clock = { now: 1000 };
    let failing: Error | null = pgError('25006');
    let during: (() => void) | null = null;
    const { m, events } = monitor(() => {
      during?.();
      return failing === null ? Promise.resolve() : Promise.reject(failing);
    }, clock);
    expect(await m.check()).toMatchObject({ ok: false, faults: [{ kind: 'read_only', since: 1000 }] });
    m.failed(pgError('25006'));
    m.failed(pgError('23505'));
    expect(events.map((e) => e.type)).toEqual(['failed', 'fault', 'failed']);
    // The database is writable again, but a disk fills while the probe runs: only read_only clears.
    failing = null;
    clock.now += 1000;
    during = () => {
      clock.now += 5;
      m.failed(pgError('53100'));
    };
    expect((await m.check()).faults.map((f) => f.kind)).toEqual(['disk_full']);
    const recovered = events.at(-1);
    expect(recovered?.type === 'recovered' && recovered.faults.map((f) => f.kind)).toEqual(['read_only']);
    during = null;
    clock.now += 1000;
    expect(await m.check()).toEqual({ ok: true, faults: [] });
    // A probe that fails with anything but a fault is the caller's error, not the store's health.
    failing = new Error('Cannot use a pool after calling end on the pool');
    clock.now += 1000;
    await expect(m.check()).rejects.toThrow('after calling end');
    expect((await m.check(false)).ok).toBe(true);
    await m.close();
  });

  it('keeps corrupt after a probe commits', async () => {
    const clock = { now: 1000 };
    const { m } = monitor(() => Promise.resolve(), clock);
    m.failed(pgError('XX001'));
    clock.now += 1;
    expect((await m.check()).faults.map((f) => f.kind)).toEqual(['corrupt']);
    await m.close();
  });
});

if (postgresUrl() === null) {
  describe('PostgreSQL store health', () => {
    it.skip(postgresSkipReason(), () => undefined);
  });
} else {
  describe('PostgreSQL store health', () => {
    it('probes with a committed write, at most once per cache period', async () => {
      const store = await createTestPostgresStore();
      try {
        expect(await store.checkHealth()).toEqual({ ok: true, faults: [] });
        const probed = async () =>
          (await store.pool.query<{ at: number }>('SELECT probed_at AS at FROM store_probe')).rows[0]?.at;
        const first = await probed();
        expect(first).toBeGreaterThan(0);
        expect(await store.checkHealth()).toEqual({ ok: true, faults: [] });
        expect(await probed()).toBe(first);
        await store.close();
        await expectCode(store.checkHealth(), 'STORE_CLOSED');
      } finally {
        await store.close();
      }
    });
  });
}

// The servers below are clusters of their own, stopped or made read-only by the test.
const noCluster =
  postgresUrl() === null
    ? postgresSkipReason()
    : findPostgresBin() === null
      ? 'PostgreSQL server health tests skipped: they start clusters of their own (apt-get install postgresql)'
      : null;

if (noCluster !== null) {
  describe('PostgreSQL store health on a server of its own', () => {
    it.skip(noCluster, () => undefined);
  });
} else {
  describe('PostgreSQL store health on a server of its own', () => {
    let cluster: PostgresCluster;
    let store: PostgresTaskStore | undefined;
    let admin: pg.Client | undefined;
    const events: StoreHealthEvent[] = [];
    beforeAll(async () => {
      cluster = await startPostgresCluster();
    }, 60_000);
    afterEach(async () => {
      await store?.close();
      await admin?.query('ALTER DATABASE postgres RESET default_transaction_read_only');
      await admin?.end();
      store = undefined;
      admin = undefined;
      events.length = 0;
    });
    afterAll(async () => {
      await cluster.stop();
    });

    /** The cluster's URL with a password in it (trust authentication ignores it): messages must not show it. */
    const secretUrl = () => cluster.url.replace('postgres@', 'postgres:s3cret@');

    async function open(schema: string): Promise<PostgresTaskStore> {
      return createPostgresTaskStore({
        url: secretUrl(),
        schema,
        poolSize: 2,
        healthCacheMs: 50,
        onHealth: (e) => events.push(e),
      });
    }

    const kinds = (type: StoreHealthEvent['type']) =>
      events.flatMap((e) => (e.type === type && e.type !== 'recovered' ? [e.fault.kind] : []));

    it('says read_only while the database refuses writes, and recovers by itself', async () => {
      store = await open('ro');
      admin = new pg.Client({ connectionString: cluster.url });
      await admin.connect();
      expect((await store.checkHealth()).ok).toBe(true);
      await admin.query('ALTER DATABASE postgres SET default_transaction_read_only = on');
      // Sessions take the setting when they start: end the store's so that it opens new ones.
      await admin.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'codecall'",
      );
      await until(() => store?.pool.totalCount === 0);
      await sleep(60); // past the cached answer of the first probe

      const health = await store.checkHealth();
      expect(health.ok).toBe(false);
      expect(health.faults).toMatchObject([{ kind: 'read_only', code: '25006' }]);
      expect(health.faults[0]?.message).toContain('refuses writes');
      expect(health.faults[0]?.message).toContain(':***@127.0.0.1');
      expect(health.faults[0]?.message).not.toContain('s3cret');
      await expectCode(store.createTask(codeInput()), 'STORE_ERROR');
      expect(kinds('fault')).toEqual(['read_only']);
      // Every failure is counted (the monitor's own retries too), the fault logged once.
      expect(kinds('failed').length).toBeGreaterThanOrEqual(2);
      expect(new Set(kinds('failed'))).toEqual(new Set(['read_only']));
      // Reads still work; a new node refuses to open on it.
      expect(await store.countTasks()).toBe(0);
      const refused = await open('ro2').catch((e: unknown) => e);
      expect(refused).toMatchObject({ code: 'STORE_UNAVAILABLE', details: { kind: 'read_only' } });
      expect((refused as Error).message).toContain('refuses writes');

      await admin.query('ALTER DATABASE postgres RESET default_transaction_read_only');
      // Nobody asks: the monitor probes again while faulted, on fresh connections.
      await until(() => events.some((e) => e.type === 'recovered'));
      expect(events.at(-1)).toMatchObject({ type: 'recovered', faults: [{ kind: 'read_only' }] });
      expect(await store.checkHealth({ probe: false })).toEqual({ ok: true, faults: [] });
      expect((await store.createTask(codeInput())).status).toBe('pending');
    });

    it('says cannot_open once its server is stopped, and operations fail STORE_UNAVAILABLE', async () => {
      store = await open('gone');
      const task = await store.createTask(codeInput());
      await cluster.stop();
      const health = await store.checkHealth();
      expect(health.ok).toBe(false);
      expect(health.faults.map((f) => f.kind)).toEqual(['cannot_open']);
      expect(health.faults[0]?.message).toContain('cannot connect to the PostgreSQL server postgres://');
      expect(health.faults[0]?.message).not.toContain('s3cret');
      await expectCode(store.getTask(task.id), 'STORE_UNAVAILABLE');
      await expectCode(store.createTask(codeInput()), 'STORE_UNAVAILABLE');
      expect(kinds('fault')).toEqual(['cannot_open']);
      expect(kinds('failed').length).toBeGreaterThanOrEqual(3);
      expect((await store.checkHealth({ probe: false })).faults.map((f) => f.kind)).toEqual(['cannot_open']);
    });
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await sleep(20);
  }
}
