// Child process for the all-tools limit race (ADR 0044 amended 2026-12-07): a server of its own on one SQLite file
// or one PostgreSQL schema. Says "ready" on stderr, waits for stdin data (so all start together), takes usage for
// `calls` calls of the tools in turn, each with the tenant's all-tools key, and prints how many were given.
import { once } from 'node:events';
import { ALL_TOOLS_KEY } from '../../src/spec/index.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import { createPostgresTaskStore } from '../../src/store/postgres/create-postgres-task-store.ts';

const [kind, where, schema, calls, now] = process.argv.slice(2);
if (kind === undefined || where === undefined || calls === undefined || now === undefined) {
  throw new Error('usage: usage-take-worker sqlite|postgres <path|url> <schema|-> <calls> <now>');
}
const store =
  kind === 'sqlite'
    ? await createSqliteTaskStore({ path: where })
    : await createPostgresTaskStore({ url: where, schema: schema ?? '', poolSize: 3 });
const at = Number(now);
const all = {
  tool: ALL_TOOLS_KEY,
  rate: { perSecond: 0.001, burst: 40 },
  quota: { max: 25, periodStart: at, periodEnd: at + 3_600_000 },
};
const tools = ['web.search', 'web.fetch', 'db.query'];
const go = once(process.stdin, 'data');
process.stderr.write('ready\n');
await go;
process.stdin.pause();
// Three at a time on PostgreSQL (a pool of 3); SQLite's connection takes them in turn within the process.
const given = await Promise.all(
  Array.from({ length: Number(calls) }, (_, i) =>
    store.takeUsage({
      tenant: 'acme',
      tool: tools[i % 3] ?? 'web.search',
      now: at,
      rate: { perSecond: 0.001, burst: 100 },
      also: [all],
    }),
  ),
);
await store.close();
process.stdout.write(JSON.stringify(given.filter((g) => g.ok).length));
