import { rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { probePython } from '../src/sandbox/index.ts';
import { createPostgresTaskStore } from '../src/store/postgres/create-postgres-task-store.ts';
import { PG_SCHEMA_VERSION } from '../src/store/postgres/pg-migrations.ts';
import { assertBuilt, cliTestDir, codecall, lastJson } from './cli-fixture.ts';
import { freshSchema, postgresSkipReason, postgresUrl } from './support/postgres-store.ts';

interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

async function doctorChecks(env: Record<string, string>, ...args: string[]) {
  const r = await codecall(env, 'doctor', '--json', ...args);
  const { checks } = lastJson(r.stdout) as { checks: Check[] };
  return { code: r.code, by: Object.fromEntries(checks.map((c) => [c.name, c])) };
}

async function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 1));
    });
  });
}

describe('codecall doctor (the built CLI)', () => {
  beforeAll(() => assertBuilt());

  it('reports every driver, and python as this machine can run it', async () => {
    const probe = await probePython();
    const r = await codecall({}, 'doctor', '--json');
    const { checks } = lastJson(r.stdout) as { checks: { name: string; ok: boolean; detail: string }[] };
    const by = Object.fromEntries(checks.map((c) => [c.name, c]));
    expect(by.quickjs?.ok).toBe(true);
    expect(by.python?.ok).toBe(probe.ok);
    expect(r.code).toBe(probe.ok ? 0 : 1);
    if (probe.ok) expect(by.python?.detail).toContain(`cpython ${probe.python}`);
    // The python image: each installed package with its version; a missing one is a warning, not a failure.
    if (probe.ok) {
      expect(by.image?.ok).toBe(true);
      for (const [name, version] of Object.entries(probe.packages)) {
        if (version) expect(by.image?.detail).toContain(`${name} ${version}`);
        else expect(by.image?.detail).toMatch(new RegExp(`missing: .*${name}`));
      }
    }
  });

  it('says how to fix a missing bubblewrap', async () => {
    const r = await codecall({}, 'doctor', '--bwrap', '/nonexistent/bwrap');
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /FAIL python\s+bubblewrap \(bwrap\) was not found: install it \(Debian\/Ubuntu: apt-get install bubblewrap/,
    );
  });
});

const url = postgresUrl();

describe('codecall doctor on a PostgreSQL database (the built CLI)', () => {
  beforeAll(() => assertBuilt());

  it.skipIf(url === null)(
    `connects and reports the server's version and the schema's, found as serve finds the db${url === null ? ` (${postgresSkipReason()})` : ''}`,
    async () => {
      const base = url ?? '';
      const schema = freshSchema('doctor');
      // Configured through the environment, as `serve` would read it: not created yet, and nothing is created.
      const env = { CODECALL_DB: base, CODECALL_POSTGRES_SCHEMA: schema };
      const before = await doctorChecks(env);
      expect(before.by.postgres?.ok).toBe(true);
      expect(before.by.postgres?.detail).toMatch(
        new RegExp(`^PostgreSQL \\d+\\.\\d+ at postgres://.*; schema ${schema} not created yet`),
      );
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      try {
        const exists = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
        expect(exists.rowCount).toBe(0);
        // Through a config file, once a store made the schema: its version.
        await (await createPostgresTaskStore({ url: base, schema, poolSize: 1 })).close();
        const dir = await cliTestDir('doctor');
        const config = join(dir, 'codecall.json');
        await writeFile(config, JSON.stringify({ db: base, postgresSchema: schema }));
        const after = await doctorChecks({}, '--config', config);
        expect(after.by.postgres).toMatchObject({ ok: true });
        expect(after.by.postgres?.detail).toContain(`schema ${schema} at version ${PG_SCHEMA_VERSION}`);
        // A schema a newer codecall migrated: this one says to upgrade.
        await client.query(`UPDATE "${schema}".schema_version SET version = 99`);
        const newer = await doctorChecks({}, '--db', base, '--config', config);
        expect(newer.code).toBe(1);
        expect(newer.by.postgres?.ok).toBe(false);
        expect(newer.by.postgres?.detail).toContain(
          `schema ${schema} is at version 99, newer than this codecall supports (${PG_SCHEMA_VERSION}): upgrade codecall`,
        );
        await rm(dir, { recursive: true, force: true });
      } finally {
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await client.end();
      }
    },
  );

  it('a closed port: FAIL with what to check, exit 1, and never the password', async () => {
    const db = `postgres://codecall:hunter2-secret@127.0.0.1:${await closedPort()}/codecall`;
    const r = await codecall({}, 'doctor', '--db', db);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /FAIL postgres cannot connect to postgres:\/\/codecall:\*\*\*@127\.0\.0\.1:\d+\/codecall: connection refused: is PostgreSQL running and listening on 127\.0\.0\.1:\d+\?/,
    );
    expect(r.stdout).not.toContain('hunter2-secret');
  });
});
