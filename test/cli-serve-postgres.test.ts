import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redactUrl } from '../src/store/postgres/create-postgres-task-store.ts';
import { assertBuilt, cliTestDir, codecall, root, startCodecall, until } from './cli-fixture.ts';
import { freshSchema, postgresSkipReason, postgresUrl } from './support/postgres-store.ts';

// `codecall serve --db postgres://...` as real processes on the run's PostgreSQL server: two nodes on one schema,
// /readyz, a task submitted to one and read from the other, its row in PostgreSQL, a clean SIGTERM. And what is
// refused, with what to do: an unreachable server, a keyed-audit setting, the commands that read an SQLite file.

const url = postgresUrl();

const TOOLS = `
import { existsSync } from 'node:fs';
import { defineTool } from 'codecall';
export default [
  defineTool({
    name: 'released',
    description: 'whether the test has released the task (its file exists)',
    effect: 'read',
    execute: (a) => existsSync(a.path),
  }),
  defineTool({
    name: 'nap',
    description: 'sleeps ms, unless aborted',
    effect: 'read',
    execute: (a, ctx) => new Promise((resolve, reject) => {
      const t = setTimeout(() => resolve('rested'), a.ms);
      ctx.signal.addEventListener('abort', () => { clearTimeout(t); reject(new Error('aborted')); });
    }),
  }),
];
`;

/** A URL with a password (the test server trusts loopback and never asks for it): logs must never show it. */
function withPassword(base: string): string {
  const u = new URL(base);
  u.password = 'hunter2-secret';
  return u.toString();
}

async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url ?? '' });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

const skipReason = url === null ? postgresSkipReason() : '';
if (skipReason !== '') console.warn(`test/cli-serve-postgres.test.ts: ${skipReason}`);

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

describe.skipIf(skipReason !== '')(
  `codecall serve on PostgreSQL${skipReason === '' ? '' : ` (${skipReason})`}`,
  () => {
    const schema = freshSchema('serve');
    const db = withPassword(url ?? 'postgres://x@127.0.0.1/x');
    const nodes: ReturnType<typeof startCodecall>[] = [];
    let dir = '';
    let tools = '';
    let headers: Record<string, string> = {};
    beforeAll(async () => {
      dir = await cliTestDir('serve-postgres');
      tools = join(dir, 'tools.js');
      await writeFile(tools, TOOLS);
    });
    afterAll(async () => {
      for (const n of nodes) n.child.kill('SIGKILL');
      await dropSchema(schema);
      await rm(dir, { recursive: true, force: true });
    });

    async function node() {
      const args = ['serve', '--port', '0', '--db', db, '--postgres-schema', schema, '--no-python'];
      const s = startCodecall({}, ...args, '--postgres-pool-size', '4', '--tools', tools);
      nodes.push(s);
      let base = '';
      await until(() => {
        if (s.child.exitCode !== null) throw new Error(`serve exited: ${s.stderr()}`);
        base = /serving on (http:\/\/\S+)/.exec(s.stderr())?.[1] ?? '';
        return base !== '';
      }, 30_000);
      // Ready once its sandboxes are (503 STARTING until then).
      await until(async () => (await fetch(`${base}/readyz`)).status === 200);
      return { ...s, base };
    }

    async function submit(base: string, code: string): Promise<string> {
      const res = await fetch(`${base}/api/v1/tasks`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ code }),
      });
      expect(res.status).toBe(201);
      return String(((await res.json()) as { task_id: string }).task_id);
    }

    async function viewWhen(
      base: string,
      id: string,
      status: string,
      timeoutMs = 30_000,
    ): Promise<Record<string, unknown>> {
      let view: Record<string, unknown> = {};
      await until(async () => {
        view = (await (await fetch(`${base}/api/v1/tasks/${id}`, { headers })).json()) as Record<
          string,
          unknown
        >;
        return view.status === status;
      }, timeoutMs);
      return view;
    }

    // Two or three server starts each: at load 20+ a start alone takes 10-20 s.
    it('two nodes on one database: ready, a task submitted to one runs and reads the same from the other, its row in PostgreSQL; SIGTERM exits 0', async () => {
      const first = await node();
      const key = /^\s+(cc_\S+)$/m.exec(first.stderr())?.[1];
      expect(key, first.stderr()).toBeDefined();
      headers = { authorization: `Bearer ${key ?? ''}`, 'content-type': 'application/json' };
      const second = await node();
      // The bootstrap key is made once, by the first node on an empty database.
      expect(second.stderr()).not.toContain('created admin key');
      for (const n of [first, second]) {
        expect(n.stderr()).not.toContain('hunter2-secret');
        expect(n.stderr()).toContain(`(db ${redactUrl(db)},`);
        const audit = n
          .stderr()
          .split('\n')
          .filter((l) => l.startsWith('audit: no audit key given'));
        expect(audit).toHaveLength(1);
      }
      const id = await submit(first.base, 'return await tools.nap({ ms: 50 });');
      const view = await viewWhen(second.base, id, 'succeeded');
      expect(view.result).toMatchObject({ output: 'rested' });
      // The task is a row of the schema, not of some file beside the server.
      const client = new pg.Client({ connectionString: url ?? '' });
      await client.connect();
      const row = await client.query(`SELECT status FROM "${schema}".tasks WHERE id = $1`, [id]);
      await client.end();
      expect(row.rows).toEqual([{ status: 'succeeded' }]);
      for (const n of [first, second]) {
        n.child.kill('SIGTERM');
        expect(await n.exited).toBe(0);
      }
    }, 120_000);

    it('SIGTERM on the node running a task pauses it (shutdown); the other node resumes it by replay to its end', async () => {
      const first = await node();
      // The task waits for the test's release, so it is still running when the stop comes however slow the
      // machine is (a fixed number of naps ended before the second node was up at load 20).
      const release = join(dir, 'release-shutdown');
      const code = `for (;;) { if (await tools.released({ path: ${JSON.stringify(release)} })) return 20; await tools.nap({ ms: 200 }); }`;
      const id = await submit(first.base, code);
      await viewWhen(first.base, id, 'running');
      const second = await node();
      first.child.kill('SIGTERM');
      expect(await first.exited).toBe(0);
      await writeFile(release, '');
      // The other node takes the task over and replays what the first journaled: slow on a loaded machine.
      const view = await viewWhen(second.base, id, 'succeeded', 90_000);
      expect(view.result).toMatchObject({ output: 20 });
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
      // The audit log: running on the first node, paused by its shutdown, ended by the other.
      const client = new pg.Client({ connectionString: url ?? '' });
      await client.connect();
      const audit = await client.query<{ data: string }>(
        `SELECT data FROM "${schema}".audit_log WHERE task_id = $1 AND type = 'status' ORDER BY seq`,
        [id],
      );
      await client.end();
      const changes = audit.rows.map((r) => JSON.parse(r.data) as Record<string, unknown>);
      expect(changes).toContainEqual(expect.objectContaining({ to: 'paused', pause_reason: 'shutdown' }));
      expect(changes.at(-1)).toMatchObject({ to: 'succeeded' });
      expect(changes.at(-1)?.actor).not.toBe(changes[0]?.actor);
    }, 120_000);
  },
);

describe('codecall serve and other commands on PostgreSQL: refusals that say what to do', () => {
  beforeAll(() => assertBuilt());

  it('an unreachable server refuses the start (STORE_UNAVAILABLE, exit 2), never says it serves, never shows the password', async () => {
    const db = `postgres://codecall:hunter2-secret@127.0.0.1:${await closedPort()}/codecall`;
    const r = await codecall({}, 'serve', '--port', '0', '--db', db);
    expect(r.code).toBe(2);
    expect(r.stderr).not.toContain('serving on');
    expect(r.stderr).not.toContain('hunter2-secret');
    expect(r.stderr).toMatch(
      /error STORE_UNAVAILABLE: refusing to serve: cannot connect to postgres:\/\/codecall:\*\*\*@127\.0\.0\.1:\d+\/codecall: connection refused: is PostgreSQL running/,
    );
    // A URL is not a path: no `postgres:` directory appears where the server was started.
    expect(existsSync(join(root, 'postgres:'))).toBe(false);
  });

  it('two servers starting together on an empty database make one bootstrap admin key between them', async () => {
    const fresh = freshSchema('boot');
    const args = ['serve', '--port', '0', '--db', url ?? '', '--postgres-schema', fresh, '--no-python'];
    const servers = [startCodecall({}, ...args), startCodecall({}, ...args)];
    try {
      await until(
        () => servers.every((s) => /serving on http/.test(s.stderr()) || s.child.exitCode !== null),
        30_000,
      );
      for (const s of servers) expect(s.stderr()).toMatch(/serving on http/);
      const made = servers.filter((s) => s.stderr().includes('created admin key key_bootstrap'));
      expect(made).toHaveLength(1);
      const client = new pg.Client({ connectionString: url ?? '' });
      await client.connect();
      try {
        const keys = await client.query(`SELECT id FROM "${fresh}".api_keys`);
        expect(keys.rows).toEqual([{ id: 'key_bootstrap' }]);
      } finally {
        await client.end();
      }
    } finally {
      for (const s of servers) s.child.kill('SIGKILL');
      await Promise.all(servers.map((s) => s.exited));
      await dropSchema(fresh);
    }
  });

  it('keys the audit chain with the key it is given, and refuses a key file it cannot read', async () => {
    const keyed = freshSchema('keyed');
    const key = 'k'.repeat(32);
    const s = startCodecall(
      { CODECALL_AUDIT_KEY: key },
      ...[
        'serve',
        '--port',
        '0',
        '--db',
        url ?? '',
        '--postgres-schema',
        keyed,
        '--no-python',
        '--insecure-no-auth',
      ],
    );
    try {
      let base = '';
      await until(() => {
        if (s.child.exitCode !== null) throw new Error(`serve exited: ${s.stderr()}`);
        base = /serving on (http:\/\/\S+)/.exec(s.stderr())?.[1] ?? '';
        return base !== '';
      }, 30_000);
      expect(s.stderr()).not.toContain('no audit key given');
      const res = await fetch(`${base}/api/v1/tasks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ code: 'return 1' }),
      });
      expect(res.status).toBe(201);
    } finally {
      s.child.kill('SIGKILL');
      await s.exited;
    }
    const verified = await codecall(
      {},
      'audit',
      'verify',
      '--db',
      url ?? '',
      '--schema',
      keyed,
      '--key',
      key,
      '--json',
    );
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    expect(JSON.parse(verified.stdout.trim().split('\n').at(-1) ?? '{}')).toMatchObject({ keyed: true });
    const wrong = await codecall(
      {},
      'audit',
      'verify',
      '--db',
      url ?? '',
      '--schema',
      keyed,
      '--key',
      'x'.repeat(32),
    );
    expect(wrong.code).not.toBe(0);
    const missing = await codecall(
      {},
      'serve',
      '--port',
      '0',
      '--db',
      url ?? '',
      '--audit-key-file',
      '/nonexistent/k',
    );
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('INVALID_CONFIG: cannot read the audit key');
    await dropSchema(keyed);
  });

  it('keys, audit anchor and tasks --db refuse a PostgreSQL URL, naming the feature and what to use instead', async () => {
    const db = 'postgres://codecall:hunter2-secret@127.0.0.1:1/codecall';
    const keys = await codecall({}, 'keys', 'list', '--db', db);
    expect(keys.code).toBe(2);
    expect(keys.stderr).toContain('codecall keys: not supported on PostgreSQL');
    expect(keys.stderr).toContain('/api/v1/keys');
    const audit = await codecall({}, 'audit', 'anchor', '--db', db);
    expect(audit.stderr).toContain('audit anchor reads SQLite databases only (not a postgres:// URL)');
    const tasks = await codecall({}, 'tasks', 'list', '--db', db);
    expect(tasks.stderr).toContain('--url http://HOST:PORT --key KEY');
    for (const r of [keys, audit, tasks]) expect(r.stderr).not.toContain('hunter2-secret');
  });
});
