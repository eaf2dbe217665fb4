// The service config's mcpServers (ADR 0047): from the environment as JSON, checked; createService serves the
// servers' tools beside the module's and closes them with itself. A real MCP server (test/support).
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createService } from '../../src/service/index.ts';
import { loadConfig } from '../../src/service/config.ts';

const SERVER = new URL('../support/mcp-test-server.ts', import.meta.url).pathname;

describe('mcpServers in the service config', () => {
  it('reads them from CODECALL_MCP_SERVERS and refuses a bad one naming the key', () => {
    const servers = [{ name: 'gh', command: 'node', args: ['server.js'], tools: { x: { effect: 'read' } } }];
    const config = loadConfig({ env: { CODECALL_MCP_SERVERS: JSON.stringify(servers) } });
    expect(config.mcpServers).toEqual(servers);
    expect(() =>
      loadConfig({ env: { CODECALL_MCP_SERVERS: JSON.stringify([{ name: 'a-b', command: 'x' }]) } }),
    ).toThrow(/mcpServers \(from CODECALL_MCP_SERVERS\)/);
    expect(() =>
      loadConfig({
        env: { CODECALL_MCP_SERVERS: JSON.stringify([{ name: 'ab', command: 'x', url: 'http://h' }]) },
      }),
    ).toThrow(/either a command/);
  });

  it('createService serves their tools and closes the servers with itself', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'codecall-mcp-service-'));
    const lines: string[] = [];
    const config = loadConfig({
      env: {},
      flags: {
        db: join(dir, 'tasks.db'),
        insecureNoAuth: true,
        python: false,
        mcpServers: JSON.stringify([
          { name: 'gh', command: process.execPath, args: ['--import', 'tsx', SERVER] },
        ]),
      },
    });
    const core = await createService(config, { log: (l) => lines.push(l) });
    try {
      expect(core.tools.map((t) => `${t.namespace}.${t.name}`)).toContain('tools.gh.search');
      expect(lines.join('\n')).toContain(
        'MCP server gh (codecall-test-server 1.2.3, protocol 2025-11-25): 6 tools',
      );
      await core.start();
      const t = await core.runtime.submit({ code: `return await tools.gh.search({ q: 'ap' });` });
      expect(await core.runtime.wait(t.task_id, { until: 'terminal' })).toMatchObject({
        status: 'succeeded',
        result: { output: { hits: ['apple', 'apricot'], total: 2 } },
      });
    } finally {
      await core.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('follows tools/list_changed: new tasks get the new list, a task begun before keeps its own', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'codecall-mcp-service-'));
    const lines: string[] = [];
    const config = loadConfig({
      env: {},
      flags: {
        db: join(dir, 'tasks.db'),
        insecureNoAuth: true,
        python: false,
        mcpServers: JSON.stringify([
          {
            name: 'gh',
            command: process.execPath,
            args: ['--import', 'tsx', SERVER],
            env: { MCP_EXTRA_TOOLS: '1' },
          },
        ]),
      },
    });
    const core = await createService(config, { log: (l) => lines.push(l) });
    const names = () => core.tools.map((t) => `${t.namespace}.${t.name}`);
    try {
      await core.start();
      expect(names()).not.toContain('tools.gh.late');
      // Begun with the first list: it waits for input (its manifest journaled), then looks for the new tool.
      const early = await core.runtime.submit({
        code: `await input.wait('go'); try { return await tools.gh.late(); } catch (e) { return e.code; }`,
      });
      expect(await core.runtime.wait(early.task_id)).toMatchObject({ pause_reason: 'awaiting_input' });
      const adder = await core.runtime.submit({ code: `return await tools.gh.add_tool();` });
      expect(await core.runtime.wait(adder.task_id, { until: 'terminal' })).toMatchObject({
        status: 'succeeded',
      });
      for (let i = 0; i < 200 && !names().includes('tools.gh.late'); i++) {
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(names()).toContain('tools.gh.late');
      expect(lines.join('\n')).toMatch(/MCP server gh changed its tools \(now \d+\): new tasks get them/);
      // A new task calls the new tool, with no restart.
      const late = await core.runtime.submit({ code: `return await tools.gh.late();` });
      expect(await core.runtime.wait(late.task_id, { until: 'terminal' })).toMatchObject({
        status: 'succeeded',
        result: { output: 'late' },
      });
      // The early task runs on in the world it began in: no tool change to attend to, and no `late` tool.
      await core.runtime.provideInput(early.task_id, 'go', true);
      expect(await core.runtime.wait(early.task_id, { until: 'terminal' })).toMatchObject({
        status: 'succeeded',
        result: { output: 'NO_SUCH_TOOL' },
      });
    } finally {
      await core.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('toolUnavailableRetries: from the environment or a flag, checked; 0 pauses needs_attention at once', async () => {
    expect(loadConfig({ env: {} }).toolUnavailableRetries).toBe(5);
    expect(loadConfig({ env: { CODECALL_TOOL_UNAVAILABLE_RETRIES: '3' } }).toolUnavailableRetries).toBe(3);
    expect(
      loadConfig({ env: { CODECALL_TOOL_UNAVAILABLE_RETRIES: '3' }, flags: { toolUnavailableRetries: '0' } })
        .toolUnavailableRetries,
    ).toBe(0);
    expect(() => loadConfig({ env: { CODECALL_TOOL_UNAVAILABLE_RETRIES: '-1' } })).toThrow(
      /toolUnavailableRetries \(from CODECALL_TOOL_UNAVAILABLE_RETRIES\)/,
    );

    const dir = await mkdtemp(join(tmpdir(), 'codecall-mcp-service-'));
    const down = join(dir, 'down');
    const pidFile = join(dir, 'server.pid');
    const config = loadConfig({
      env: { CODECALL_TOOL_UNAVAILABLE_RETRIES: '0' },
      flags: {
        db: join(dir, 'tasks.db'),
        insecureNoAuth: true,
        python: false,
        mcpServers: JSON.stringify([
          {
            name: 'gh',
            command: process.execPath,
            args: ['--import', 'tsx', SERVER],
            env: { MCP_DOWN_FILE: down, MCP_PID_FILE: pidFile },
          },
        ]),
      },
    });
    const core = await createService(config, { log: () => undefined });
    try {
      await core.start();
      // The server goes down and will not come back: the call is never sent.
      await writeFile(down, '');
      process.kill(Number(await readFile(pidFile, 'utf8')), 'SIGKILL');
      await new Promise((r) => setTimeout(r, 300));
      const t = await core.runtime.submit({
        code: `return await tools.gh.search({ q: 'ap' });`,
        maxRetries: 0,
      });
      // With the default (5) it would be pending, to run again in ~1-2 s; with 0 a human is asked at once.
      expect(await core.runtime.wait(t.task_id)).toMatchObject({
        status: 'paused',
        pause_reason: 'needs_attention',
        error: { code: 'TOOL_UNAVAILABLE' },
      });
      const journal = await core.store.readJournal(t.task_id);
      expect(journal.filter((e) => e.type === 'control' && e.data.action === 'retry')).toEqual([]);
    } finally {
      await core.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('toolUnavailableRetryBaseMs: a config key (environment or flag, checked), the first wait of such a run again', async () => {
    expect(loadConfig({ env: {} }).toolUnavailableRetryBaseMs).toBe(2000);
    expect(
      loadConfig({ env: { CODECALL_TOOL_UNAVAILABLE_RETRY_BASE_MS: '500' } }).toolUnavailableRetryBaseMs,
    ).toBe(500);
    expect(
      loadConfig({
        env: { CODECALL_TOOL_UNAVAILABLE_RETRY_BASE_MS: '500' },
        flags: { toolUnavailableRetryBaseMs: '60000' },
      }).toolUnavailableRetryBaseMs,
    ).toBe(60_000);
    expect(() => loadConfig({ env: { CODECALL_TOOL_UNAVAILABLE_RETRY_BASE_MS: '5' } })).toThrow(
      /toolUnavailableRetryBaseMs \(from CODECALL_TOOL_UNAVAILABLE_RETRY_BASE_MS\)/,
    );

    const dir = await mkdtemp(join(tmpdir(), 'codecall-mcp-service-'));
    const down = join(dir, 'down');
    const pidFile = join(dir, 'server.pid');
    const config = loadConfig({
      env: { CODECALL_TOOL_UNAVAILABLE_RETRIES: '1', CODECALL_TOOL_UNAVAILABLE_RETRY_BASE_MS: '60000' },
      flags: {
        db: join(dir, 'tasks.db'),
        insecureNoAuth: true,
        python: false,
        mcpServers: JSON.stringify([
          {
            name: 'gh',
            command: process.execPath,
            args: ['--import', 'tsx', SERVER],
            env: { MCP_DOWN_FILE: down, MCP_PID_FILE: pidFile },
          },
        ]),
      },
    });
    const core = await createService(config, { log: () => undefined });
    try {
      await core.start();
      await writeFile(down, '');
      process.kill(Number(await readFile(pidFile, 'utf8')), 'SIGKILL');
      await new Promise((r) => setTimeout(r, 300));
      const t = await core.runtime.submit({
        code: `return await tools.gh.search({ q: 'ap' });`,
        maxRetries: 0,
      });
      let retry: { run_after?: unknown } | undefined;
      let at = 0;
      for (let i = 0; i < 200 && !retry; i++) {
        await new Promise((r) => setTimeout(r, 50));
        const entry = (await core.store.readJournal(t.task_id)).find(
          (e) => e.type === 'control' && e.data.action === 'retry',
        );
        if (entry) {
          retry = entry.data as { run_after?: unknown };
          at = Date.parse(entry.createdAt);
        }
      }
      // The first wait is the base, half of it jittered: 30-60 s here (the default's would be 1-2 s).
      const wait = Number(retry?.run_after) - at;
      expect(wait).toBeGreaterThanOrEqual(30_000 - 1000);
      expect(wait).toBeLessThanOrEqual(60_000 + 1000);
      expect(await core.store.getTask(t.task_id)).toMatchObject({ status: 'pending' });
    } finally {
      await core.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
