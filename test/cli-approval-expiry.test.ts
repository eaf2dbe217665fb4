import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteTaskStore } from '../src/store/index.ts';
import { cliTestDir, startCodecall, until } from './cli-fixture.ts';

// Approval expiry survives a restart (ADR 0031): `codecall serve --approval-ttl-seconds` journals the deadline with
// the request; a server started after it has passed (even one without the flag) expires the request on its first
// sweep, as `system`, the program catches APPROVAL_EXPIRED, and a late approval is a 409.

const TOOLS = `
import { defineTool } from 'codecall';
export default [
  defineTool({ name: 'wire', description: 'wires money', requiresApproval: true, execute: () => 'wired' }),
];
`;

const CODE = `
  try { return await tools.wire({ to: 'x' }); }
  catch (e) { return e.name + ' ' + e.code; }`;

describe('approval expiry across a restart of codecall serve', () => {
  let dir: string;
  let db: string;
  let tools: string;
  beforeAll(async () => {
    dir = await cliTestDir('cli-approval-expiry');
    db = join(dir, 'tasks.db');
    tools = join(dir, 'tools.js');
    await writeFile(tools, TOOLS);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  async function serve(...flags: string[]) {
    const s = startCodecall(
      {},
      'serve',
      '--port',
      '0',
      '--db',
      db,
      '--tools',
      tools,
      '--insecure-no-auth',
      ...flags,
    );
    let base = '';
    await until(() => {
      base = /serving on (http:\/\/[^\s]+)/.exec(s.stderr())?.[1] ?? '';
      return base !== '';
    }, 60_000);
    return { ...s, base };
  }
  const json = async (res: Response) => (await res.json()) as Record<string, unknown>;

  it('expires on the next start a request whose time passed while no server ran', async () => {
    const first = await serve('--approval-ttl-seconds', '2');
    let id = '';
    let expiresAt = 0;
    let approval = '';
    try {
      const created = await fetch(`${first.base}/api/v1/tasks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ code: CODE }),
      });
      expect(created.status).toBe(201);
      id = String((await json(created)).task_id);
      await until(async () => {
        const inbox = (await json(await fetch(`${first.base}/api/v1/approvals`))) as {
          approvals: { task_id: string; approval_id: string; expires_at: string | null }[];
        };
        const item = inbox.approvals.find((a) => a.task_id === id);
        expiresAt = Date.parse(item?.expires_at ?? '');
        approval = item?.approval_id ?? '';
        return item !== undefined;
      }, 60_000);
      expect(expiresAt).toBeGreaterThan(Date.now() - 30_000);
    } finally {
      first.child.kill('SIGTERM');
      expect(await first.exited).toBe(0);
    }

    // Stopped: the request is still pending, and stays so until a server runs again.
    await until(() => Date.now() > expiresAt + 500, 60_000);
    const before = await createSqliteTaskStore({ path: db });
    expect(await before.getTask(id)).toMatchObject({ status: 'paused', pauseReason: 'approval_required' });
    await before.close();

    const second = await serve();
    try {
      await until(
        async () => (await json(await fetch(`${second.base}/api/v1/tasks/${id}`))).status === 'succeeded',
        60_000,
      );
      const done = await json(await fetch(`${second.base}/api/v1/tasks/${id}`));
      expect(done).toMatchObject({ result: { output: 'ToolRejectedError APPROVAL_EXPIRED' } });
      const late = await fetch(`${second.base}/api/v1/tasks/${id}/approvals/${approval}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ decision: 'approve' }),
      });
      expect(late.status).toBe(409);
      expect(await json(late)).toMatchObject({ error: { code: 'APPROVAL_EXPIRED' } });
    } finally {
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    }

    const after = await createSqliteTaskStore({ path: db });
    try {
      const journal = await after.readJournal(id);
      const decisions = journal.filter((e) => e.type === 'approval_decision');
      expect(decisions.map((e) => e.data)).toEqual([
        expect.objectContaining({ decision: 'reject', actor: 'system', expired: true }),
      ]);
    } finally {
      await after.close();
    }
  });
});
