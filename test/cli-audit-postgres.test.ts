import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, codecall, lastJson } from './cli-fixture.ts';
import {
  createTestPostgresStore,
  freshSchema,
  postgresSkipReason,
  postgresUrl,
  tamperPostgres,
} from './support/postgres-store.ts';

// `codecall audit verify --db postgres://...` checks every task's journal and audit chains through the store's
// reads, as on SQLite; keyed audit and anchors are SQLite's, so asking for them is refused, as is an anchor.

const url = postgresUrl();
const skipped = url === null ? ` (${postgresSkipReason()})` : '';

describe.skipIf(url === null)(`codecall audit on PostgreSQL${skipped}`, () => {
  beforeAll(() => assertBuilt());

  it('verifies the chains: intact, then one rewritten journal entry named; a missing schema is NOT_FOUND', async () => {
    const db = url ?? '';
    const store = await createTestPostgresStore({ poolSize: 1 });
    const schema = store.schema;
    const input = { kind: 'code', code: 'return 1', language: 'javascript', seed: 1 } as const;
    const tasks = [await store.createTask(input), await store.createTask(input)];
    await store.close();
    const intact = await codecall({}, 'audit', 'verify', '--db', db, '--postgres-schema', schema);
    expect(intact.code, intact.stderr).toBe(0);
    expect(intact.stdout).toContain('checked 2 tasks');
    expect(intact.stdout).toContain('note: keyed audit is not supported on PostgreSQL yet');
    expect(intact.stdout).toContain('all chains intact');

    const victim = tasks[1]?.id ?? '';
    await tamperPostgres(schema, async (c) => {
      await c.query('UPDATE journal SET data = $1 WHERE task_id = $2 AND seq = 1', ['{"clock":999}', victim]);
    });
    const broken = await codecall(
      { CODECALL_POSTGRES_SCHEMA: schema },
      'audit',
      'verify',
      '--db',
      db,
      '--json',
    );
    expect(broken.code).toBe(1);
    const report = lastJson(broken.stdout);
    expect(report).toMatchObject({ ok: false, keyed: false, tasks: 2 });
    expect(report.broken).toEqual([expect.objectContaining({ task_id: victim, log: 'journal', seq: 1 })]);

    const none = await codecall({}, 'audit', 'verify', '--db', db, '--postgres-schema', freshSchema('none'));
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/error NOT_FOUND: no codecall schema none_\d+_\d+ at postgres:\/\//);
  });

  it('refuses keyed checks and anchors, saying what verify does instead', async () => {
    const db = url ?? '';
    const anchored = await codecall({}, 'audit', 'verify', '--db', db, '--anchor', 'a.json');
    expect(anchored.code).toBe(2);
    expect(anchored.stderr).toContain(
      '--anchor: keyed audit and anchors are not supported on PostgreSQL yet',
    );
    const anchor = await codecall({}, 'audit', 'anchor', '--db', db);
    expect(anchor.code).toBe(2);
    expect(anchor.stderr).toContain('codecall audit anchor (keyed anchors): not supported on PostgreSQL');
  });
});
