import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteTaskStore } from '../src/store/index.ts';
import { cliTestDir, codecall, lastJson } from './cli-fixture.ts';
import { openForTampering } from './store/tamper.ts';

// `codecall audit verify` over a real task database: intact chains, then rows rewritten and removed behind the
// store's back (as an attacker or a bad disk could).

const TOOLS = `
import { defineTool } from 'codecall';
export default [defineTool({ name: 'tick', description: 'echoes i', effect: 'read', execute: (a) => a.i })];
`;

describe('codecall audit verify', () => {
  let dir: string;
  let db: string;
  const ids: string[] = [];
  beforeAll(async () => {
    dir = await cliTestDir('cli-audit');
    db = join(dir, 'tasks.db');
    await writeFile(join(dir, 'tools.js'), TOOLS);
    await writeFile(
      join(dir, 'ticks.js'),
      'const out = []; for (let i = 0; i < 3; i++) out.push(await tools.tick({ i })); return out;\n',
    );
    for (let i = 0; i < 3; i++) {
      const r = await codecall(
        {},
        ...['exec', join(dir, 'ticks.js'), '--db', db, '--tools', join(dir, 'tools.js'), '--json'],
      );
      expect(r.code, r.stderr).toBe(0);
      ids.push(String(lastJson(r.stdout).task_id));
    }
    // One more that never ran (only its first journal entry and `created` audit link).
    const store = await createSqliteTaskStore({ path: db });
    try {
      ids.push(
        (await store.createTask({ kind: 'code', code: 'return 1', language: 'javascript', seed: 1 })).id,
      );
    } finally {
      await store.close();
    }
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('reports every chain intact with the counts, exit 0', async () => {
    const r = await codecall({}, 'audit', 'verify', '--db', db, '--json');
    expect(r.code, r.stderr).toBe(0);
    const out = lastJson(r.stdout);
    expect(out).toMatchObject({ ok: true, tasks: 4, broken: [] });
    expect(out.journal_entries).toBeGreaterThan(3 * 6);
    // created, pending -> running, running -> succeeded for each run task; created for the last.
    expect(out.audit_entries).toBe(3 * 3 + 1);

    const text = await codecall({}, 'audit', 'verify', '--db', db);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^checked 4 tasks: \d+ journal entries, 10 audit entries$/m);
    expect(text.stdout).toContain('all chains intact');
  });

  it('names the first broken link of each tampered log and exits 1', async () => {
    const [rewritten, audited, truncated] = ids as [string, string, string];
    const t = openForTampering(db);
    try {
      const journal = t.prepare('UPDATE journal SET data = ? WHERE task_id = ? AND seq = ?');
      journal.run('{"tampered":true}', rewritten, 3);
      journal.run('{"tampered":true}', rewritten, 5);
      t.prepare(
        "UPDATE audit_log SET data = json_set(data, '$.actor', 'mallory') WHERE task_id = ? AND seq = 2",
      ).run(audited);
      // A cut tail leaves a valid chain; only the audit log's record of the journal's length shows it.
      t.prepare('DELETE FROM journal WHERE task_id = ? AND seq > 2').run(truncated);
    } finally {
      t.close();
    }

    const r = await codecall({}, 'audit', 'verify', '--db', db, '--json');
    expect(r.code, r.stderr).toBe(1);
    const out = lastJson(r.stdout);
    expect(out).toMatchObject({ ok: false, tasks: 4 });
    const all = out.broken as {
      source: string;
      task_id: string;
      log: string;
      seq: number;
      kind: string;
      message: string;
    }[];
    // The keyed chain (ADR 0030) names the rewritten audit row too, and the cut journal its pins no longer match
    // (the rewritten one kept its checksums: its broken unkeyed chain below is the finding).
    const keyed = all.filter((b) => b.source === 'keyed');
    expect(keyed.filter((b) => b.kind !== 'journal_modified').map((b) => [b.task_id, b.seq, b.kind])).toEqual(
      [[audited, 2, 'row_modified']],
    );
    expect([...new Set(keyed.filter((b) => b.kind === 'journal_modified').map((b) => b.task_id))]).toEqual([
      truncated,
    ]);
    const broken = all.filter((b) => b.source === 'chain');
    expect(broken.map((b) => [b.task_id, b.log, b.seq])).toEqual([
      [rewritten, 'journal', 3],
      [audited, 'audit', 2],
      [truncated, 'journal', 3],
    ]);
    expect(broken.map((b) => b.message)).toEqual([
      expect.stringContaining('checksum mismatch') as unknown,
      expect.stringContaining('checksum mismatch') as unknown,
      expect.stringContaining('entries were removed') as unknown,
    ]);

    const text = await codecall({}, 'audit', 'verify', '--db', db);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain(`BROKEN ${rewritten}  journal  seq 3: `);
    expect(text.stdout).toContain(`BROKEN ${audited}  audit  seq 2: `);
    expect(text.stdout).toContain(`BROKEN ${truncated}  journal  seq 3: `);
    expect(text.stdout).toContain('5 findings');
  });

  it('refuses a database that does not exist', async () => {
    const r = await codecall({}, 'audit', 'verify', '--db', join(dir, 'nope.db'));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('error NOT_FOUND');
  });
});
