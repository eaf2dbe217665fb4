import { rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliTestDir, codecall, lastJson, startCodecall, until } from './cli-fixture.ts';

// `codecall serve` keys the audit chain (ADR 0030): a first start makes `<db>.audit-key` (0600) beside the
// database, tasks served get keyed audit rows that verify clean across a restart, and a replaced key file stops
// the next start with AUDIT_KEY_MISMATCH instead of appending rows no one can verify.

describe('codecall serve and the audit key', () => {
  let dir: string;
  let db: string;
  beforeAll(async () => {
    dir = await cliTestDir('cli-serve-audit-key');
    db = join(dir, 'tasks.db');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  async function serve() {
    const s = startCodecall({}, 'serve', '--port', '0', '--db', db, '--insecure-no-auth');
    let base = '';
    await until(() => {
      base = /serving on (http:\/\/[^\s]+)/.exec(s.stderr())?.[1] ?? '';
      return base !== '';
    }, 60_000);
    return { ...s, base };
  }

  async function runTask(base: string): Promise<void> {
    const res = await fetch(`${base}/api/v1/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code: 'return 6 * 7' }),
    });
    const { task_id } = (await res.json()) as { task_id: string };
    await until(async () => {
      const t = (await (await fetch(`${base}/api/v1/tasks/${task_id}`)).json()) as { status: string };
      return t.status === 'succeeded';
    }, 60_000);
  }

  it('creates the key 0600 on the first start; served tasks verify keyed, also after a restart', async () => {
    const first = await serve();
    expect(first.stderr()).toContain(`created audit key ${db}.audit-key`);
    expect((await stat(`${db}.audit-key`)).mode & 0o777).toBe(0o600);
    await runTask(first.base);
    first.child.kill('SIGTERM');
    await first.exited;

    const second = await serve();
    expect(second.stderr()).not.toContain('created audit key');
    await runTask(second.base);
    second.child.kill('SIGTERM');
    await second.exited;

    const r = await codecall({}, 'audit', 'verify', '--db', db, '--json');
    expect(r.code, r.stdout).toBe(0);
    const out = lastJson(r.stdout);
    expect(out).toMatchObject({ ok: true, keyed: true, tasks: 2, legacy_audit_entries: 0, broken: [] });
    expect(out.keyed_audit_entries).toBe(6);
  });

  it('refuses to start with a replaced key file (AUDIT_KEY_MISMATCH), never saying it serves', async () => {
    await writeFile(`${db}.audit-key`, `${'0'.repeat(64)}\n`, { mode: 0o600 });
    const s = startCodecall({}, 'serve', '--port', '0', '--db', db, '--insecure-no-auth');
    const code = await s.exited;
    expect(code).not.toBe(0);
    expect(s.stderr()).not.toContain('serving on');
    expect(s.stderr()).toContain('AUDIT_KEY_MISMATCH');
  });
});
