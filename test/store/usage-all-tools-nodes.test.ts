// The all-tools limit (ADR 0044 amended 2026-12-07) taken by several processes at once, each a server with a
// connection (SQLite) or a pool (PostgreSQL) of its own: together they are never given more than the limit, and
// exactly the limit when more is asked.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import {
  freshSchema,
  createTestPostgresStore,
  postgresSkipReason,
  postgresUrl,
} from '../support/postgres-store.ts';

const NOW = Date.UTC(2026, 11, 7);

function startServer(args: string[]): { ready: Promise<void>; go: () => void; done: Promise<number> } {
  const child = spawn(process.execPath, [
    '--import',
    'tsx',
    join(import.meta.dirname, 'usage-take-worker.ts'),
    ...args,
  ]);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const ready = new Promise<void>((resolve) => {
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes('ready')) resolve();
    });
  });
  const done = once(child, 'exit').then(([code]) => {
    if (code !== 0) throw new Error(`server exited ${String(code)}: ${stderr}`);
    return JSON.parse(stdout) as number;
  });
  return { ready, go: () => child.stdin.end('go'), done };
}

async function race(args: string[]): Promise<number[]> {
  const servers = [1, 2, 3].map(() => startServer([...args, '20', String(NOW)]));
  await Promise.all(servers.map((s) => s.ready));
  for (const s of servers) s.go();
  return Promise.all(servers.map((s) => s.done));
}

describe('the all-tools limit over processes taking at once', () => {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'codecall-usage-nodes-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it(
    'three processes on one SQLite file are given 25 of 60 calls, the quota over all tools',
    { timeout: 60_000 },
    async () => {
      const path = join(dir, 'usage.db');
      // Migrated once here, so the servers start on a file that is ready.
      await (await createSqliteTaskStore({ path })).close();
      const given = await race(['sqlite', path, '-']);
      expect(given.reduce((a, b) => a + b, 0)).toBe(25);
    },
  );

  it.skipIf(postgresUrl() === null)(
    `three processes on one PostgreSQL schema are given 25 of 60 calls${postgresUrl() === null ? ` (skipped: ${postgresSkipReason()})` : ''}`,
    { timeout: 60_000 },
    async () => {
      const schema = freshSchema('usage_nodes');
      await (await createTestPostgresStore({ schema })).close();
      const given = await race(['postgres', postgresUrl() ?? '', schema]);
      expect(given.reduce((a, b) => a + b, 0)).toBe(25);
    },
  );
});
