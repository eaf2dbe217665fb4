import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliTestDir, codecall, lastJson } from './cli-fixture.ts';
import { openForTampering, tamperedCopy } from './store/tamper.ts';

// Data derived from a task and written beside it, which lists, views and the approval inbox read instead of the
// task itself (ADR 0036: the list form of a big program; ADR 0035: the journal summary with its light rows), is
// checked by `codecall audit verify` by deriving it again: an edit there would show people something the task
// does not hold (another program in a list, another payment in the inbox).

const TOOLS = `
import { defineTool } from 'codecall';
export default [defineTool({
  name: 'pay', description: 'pays once approved', effect: 'unsafe', requiresApproval: true,
  input: { type: 'object', properties: { amount: { type: 'number' }, memo: { type: 'string' } } },
  execute: (a) => a.amount,
})];
`;

interface Finding {
  source: string;
  task_id: string;
  log: string;
  seq: number;
  message: string;
}

describe('codecall audit verify: derived data', () => {
  let dir: string;
  let pristine: string;
  let bigProgram: string;
  let payment: string;
  beforeAll(async () => {
    dir = await cliTestDir('cli-audit-derived');
    pristine = join(dir, 'tasks.db');
    await writeFile(join(dir, 'tools.js'), TOOLS);
    await writeFile(join(dir, 'big.js'), `return 1; // ${'z'.repeat(8 * 1024)}\n`);
    await writeFile(
      join(dir, 'pay.js'),
      `return await tools.pay({ amount: 10, memo: ${JSON.stringify('m'.repeat(20 * 1024))} });\n`,
    );
    const exec = async (file: string): Promise<string> => {
      const r = await codecall(
        {},
        ...['exec', join(dir, file), '--db', pristine, '--tools', join(dir, 'tools.js'), '--json'],
      );
      return String(lastJson(r.stdout).task_id);
    };
    bigProgram = await exec('big.js');
    payment = await exec('pay.js');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const tampered = (edit: (db: Database.Database) => void): Promise<string> =>
    tamperedCopy(pristine, dir, edit);

  async function findings(path: string): Promise<{ code: number; broken: Finding[] }> {
    const r = await codecall({}, 'audit', 'verify', '--db', path, '--json');
    return { code: r.code, broken: lastJson(r.stdout).broken as Finding[] };
  }

  it('an untouched database with a big program and a big pending payment verifies clean', async () => {
    const path = await tampered(() => undefined);
    const { code, broken } = await findings(path);
    expect(broken).toEqual([]);
    expect(code).toBe(0);
    // The derived data under test is there to be checked.
    const t = openForTampering(path);
    try {
      const listed = t.prepare('SELECT listed_input FROM tasks WHERE id = ?').get(bigProgram) as {
        listed_input: string | null;
      };
      expect(listed.listed_input).not.toBeNull();
      const summary = t.prepare('SELECT summary FROM journal_summaries WHERE task_id = ?').get(payment) as {
        summary: string;
      };
      expect(summary.summary).toContain('"light"');
    } finally {
      t.close();
    }
  });

  it('a list form showing another program: the task is named', async () => {
    const path = await tampered((db) => {
      const row = db.prepare('SELECT listed_input FROM tasks WHERE id = ?').get(bigProgram) as {
        listed_input: string;
      };
      const column = JSON.parse(row.listed_input) as { input: { code: string } };
      column.input.code = 'return "harmless";';
      db.prepare('UPDATE tasks SET listed_input = ? WHERE id = ?').run(JSON.stringify(column), bigProgram);
    });
    const { code, broken } = await findings(path);
    expect(code).toBe(1);
    const found = broken.find((f) => f.task_id === bigProgram && f.log === 'task');
    expect(found?.message).toMatch(/listed_input/);
  });

  it('a list form removed: the task is named', async () => {
    const path = await tampered((db) => {
      db.prepare('UPDATE tasks SET listed_input = NULL WHERE id = ?').run(bigProgram);
    });
    const { broken } = await findings(path);
    const found = broken.find((f) => f.task_id === bigProgram && f.log === 'task');
    expect(found?.message).toMatch(/removed/);
  });

  it('a pending payment shown as another tool in the summary: the summary is named', async () => {
    const path = await tampered((db) => {
      const row = db.prepare('SELECT summary FROM journal_summaries WHERE task_id = ?').get(payment) as {
        summary: string;
      };
      // A big request's arguments are kept as their size and digest: the light row names the tool.
      const edited = row.summary.replace('"tool":"tools.pay"', '"tool":"tools.refund"');
      expect(edited).not.toBe(row.summary);
      db.prepare('UPDATE journal_summaries SET summary = ? WHERE task_id = ?').run(edited, payment);
    });
    const { code, broken } = await findings(path);
    expect(code).toBe(1);
    expect(broken).toContainEqual(expect.objectContaining({ task_id: payment, log: 'summary' }));
  });
});
