import { rm, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probePython } from '../src/sandbox/index.ts';
import { cliTestDir, codecall, lastJson } from './cli-fixture.ts';
import { tamperedCopy } from './store/tamper.ts';

// A finished task's artifacts (the files its program left: a report, a chart) are vouched for by its signed audit
// head (ADR 0030 update): data replaced with its stored digest recomputed, data replaced alone, or an artifact
// removed, each is named by `codecall audit verify` as task_field_modified, field `artifacts`.

const probe = await probePython();
const why = probe.ok ? '' : ` (skipped: python unavailable: ${probe.reason})`;

interface Finding {
  source: string;
  task_id: string;
  kind: string;
  field?: string;
  message: string;
}

describe.skipIf(!probe.ok)(`codecall audit verify: a finished task's artifacts${why}`, () => {
  let dir: string;
  let pristine: string;
  let task: string;
  beforeAll(async () => {
    dir = await cliTestDir('cli-audit-artifacts');
    pristine = join(dir, 'tasks.db');
    await writeFile(join(dir, 'report.py'), 'open("report.txt", "w").write("total: 42")\n"done"\n');
    const r = await codecall({}, 'exec', join(dir, 'report.py'), '--db', pristine, '--json');
    expect(r.code, r.stderr).toBe(0);
    task = String(lastJson(r.stdout).task_id);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const tampered = (edit: (db: Database.Database) => void): Promise<string> =>
    tamperedCopy(pristine, dir, edit);

  async function keyed(path: string): Promise<{ code: number; findings: Finding[] }> {
    const r = await codecall({}, 'audit', 'verify', '--db', path, '--json');
    const out = lastJson(r.stdout);
    return { code: r.code, findings: (out.broken as Finding[]).filter((f) => f.source === 'keyed') };
  }

  it('verifies clean untouched, with the artifact there', async () => {
    const path = await tampered((db) => {
      const row = db.prepare('SELECT name, size FROM artifacts WHERE task_id = ?').get(task);
      expect(row).toEqual({ name: 'report.txt', size: 9 });
    });
    expect(await keyed(path)).toEqual({ code: 0, findings: [] });
  });

  it('names data replaced with its digest and size recomputed', async () => {
    const path = await tampered((db) => {
      const data = Buffer.from('total: 0');
      db.prepare('UPDATE artifacts SET data = ?, size = ?, sha256 = ? WHERE task_id = ?').run(
        data,
        data.byteLength,
        createHash('sha256').update(data).digest('hex'),
        task,
      );
    });
    const { code, findings } = await keyed(path);
    expect(code).toBe(1);
    expect(findings).toContainEqual(
      expect.objectContaining({ kind: 'task_field_modified', task_id: task, field: 'artifacts' }),
    );
  });

  it('names data replaced alone (its stored digest no longer its data)', async () => {
    const path = await tampered((db) => {
      db.prepare('UPDATE artifacts SET data = ? WHERE task_id = ?').run(Buffer.from('total: 1'), task);
    });
    const { findings } = await keyed(path);
    const found = findings.filter((f) => f.field === 'artifacts').map((f) => f.message);
    expect(found.some((m) => /not its data's/.test(m))).toBe(true);
  });

  it('names an artifact removed', async () => {
    const path = await tampered((db) => {
      db.prepare('DELETE FROM artifacts WHERE task_id = ?').run(task);
    });
    const { findings } = await keyed(path);
    expect(findings).toContainEqual(
      expect.objectContaining({ kind: 'task_field_modified', task_id: task, field: 'artifacts' }),
    );
  });
});
