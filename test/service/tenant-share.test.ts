// The tenant share is soft (work-conserving, ADR 0023): one tenant alone runs past its share, over every server on
// the database, in every slot but the reserved ones (`tenantReserve`, default 1); another tenant's task takes a
// reserved slot at once, or with no reserve the next slot that frees, ahead of the first tenant's queue.
// Real servers (startService on loopback) on one SQLite file; each task waits in a tool for the test to open its
// gate, so which tasks hold a slot is seen exactly.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startService } from '../../src/http/index.ts';
import type { Service } from '../../src/http/index.ts';
import { loadConfig, newApiKey } from '../../src/service/index.ts';
import { defineTool } from '../../src/tools/index.ts';

const CONCURRENCY = 4;

/** Gates the tasks wait at: a gate is reached when its task holds a slot, opened by the test. */
function gates() {
  const reached = new Set<string>();
  const opens = new Map<string, () => void>();
  const opened = new Set<string>();
  const tool = defineTool({
    name: 'gate',
    description: 'waits until the test opens the named gate',
    input: z.object({ name: z.string() }),
    effect: 'read',
    execute: ({ name }: { name: string }) =>
      new Promise<string>((resolve) => {
        reached.add(name);
        if (opened.has(name)) resolve(name);
        else opens.set(name, () => resolve(name));
      }),
  });
  const open = (name: string): void => {
    opened.add(name);
    opens.get(name)?.();
  };
  return { tool, reached, open, openAll: () => [...reached, ...opens.keys()].forEach(open) };
}

async function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 30_000,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function shareSuite(reserve: number | null): void {
  const slots = CONCURRENCY - (reserve ?? 1);
  const what = reserve === null ? 'the default reserve (1)' : `tenantReserve ${reserve}`;
  describe(`the tenant share is work-conserving, ${what}`, () => {
    let dir: string;
    const gate = gates();
    const servers: Service[] = [];
    const keys: Record<string, string> = {};

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'codecall-tenant-share-'));
      const db = join(dir, 'tasks.db');
      // Two servers on one database: the slots and the share are counted over both.
      for (let i = 0; i < 2; i++) {
        const config = loadConfig({
          env: {},
          flags: {
            port: '0',
            db,
            python: false,
            concurrency: String(CONCURRENCY),
            ...(reserve === null ? {} : { tenantReserve: String(reserve) }),
          },
        });
        servers.push(await startService(config, { log: () => undefined, model: null, tools: [gate.tool] }));
      }
      for (const tenant of ['tenant-a', 'tenant-b']) {
        const key = newApiKey();
        await servers[0]!.store.createApiKey({ id: key.id, keyHash: key.keyHash, tenant, role: 'member' });
        keys[tenant] = key.key;
      }
    });
    afterAll(async () => {
      gate.openAll();
      for (const s of servers) await s.close();
      await rm(dir, { recursive: true, force: true });
    });

    const submit = async (tenant: string, name: string, server = 0): Promise<string> => {
      const res = await fetch(`${servers[server]!.address}/api/v1/tasks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${keys[tenant]}`, 'content-type': 'application/json' },
        body: JSON.stringify({ code: `return await tools.gate({ name: '${name}' });` }),
      });
      expect(res.status).toBe(201);
      return ((await res.json()) as { task_id: string }).task_id;
    };
    const status = async (tenant: string, id: string): Promise<string> => {
      const res = await fetch(`${servers[0]!.address}/api/v1/tasks/${id}`, {
        headers: { authorization: `Bearer ${keys[tenant]}` },
      });
      return ((await res.json()) as { status: string }).status;
    };
    const reachedOf = (prefix: string): string[] =>
      [...gate.reached].filter((g) => g.startsWith(prefix)).sort();

    it('one tenant alone runs past its share (over both servers), in every slot but the reserved', async () => {
      const ids: string[] = [];
      for (let i = 1; i <= 10; i++)
        ids.push(await submit('tenant-a', `a${String(i).padStart(2, '0')}`, i % 2));
      // The fixed share (ceil(4 * 0.5) = 2) stopped here at two.
      await until(() => reachedOf('a').length === slots, `${slots} of tenant-a's tasks in a slot`);
      // The bounds hold: the rest stay queued.
      const statuses = await Promise.all(ids.map((id) => status('tenant-a', id)));
      expect(statuses.filter((s) => s === 'running')).toHaveLength(slots);
      expect(statuses.filter((s) => s === 'pending')).toHaveLength(ids.length - slots);
    }, 120_000);

    if (slots < CONCURRENCY) {
      it("another tenant's task starts at once in a reserved slot, no borrowed one freed", async () => {
        const b = await submit('tenant-b', 'b01', 1);
        await until(() => gate.reached.has('b01'), "tenant-b's task in the reserved slot");
        expect(reachedOf('a')).toHaveLength(slots);
        expect(await status('tenant-b', b)).toBe('running');
      }, 120_000);
      return;
    }

    it("another tenant's task takes the next slot that frees, ahead of the first tenant's queue", async () => {
      const b = await submit('tenant-b', 'b01', 1);
      expect(await status('tenant-b', b)).toBe('pending');
      const [first] = reachedOf('a');
      gate.open(first!);
      await until(() => gate.reached.has('b01'), "tenant-b's task in the freed slot");
      // Only one slot freed, and tenant-b took it: none of tenant-a's 6 queued tasks started.
      expect(reachedOf('a')).toHaveLength(CONCURRENCY);
      expect(await status('tenant-b', b)).toBe('running');
      // Once tenant-b's task is done, its slot goes back to tenant-a's queue.
      gate.open('b01');
      await until(async () => (await status('tenant-b', b)) === 'succeeded', "tenant-b's task to end");
      await until(() => reachedOf('a').length === CONCURRENCY + 1, "tenant-a's next task in the slot");
    }, 120_000);
  });
}

shareSuite(null);
shareSuite(0);
