// MCP servers as tool providers (issue 22, ADR 0047): a real MCP server (test/support/mcp-test-server.ts, written
// with the SDK) over stdio and Streamable HTTP; its tools run in real sandboxes and through the durable runtime.
import { getEventListeners } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { functionTools, systemPrompt } from '../../src/agent/index.ts';
import { createRuntime } from '../../src/durable/index.ts';
import { connectMcpServers } from '../../src/mcp/index.ts';
import type { McpServerConfig, McpServers } from '../../src/mcp/index.ts';
import { createPythonDriver, createQuickJsDriver, probePython } from '../../src/sandbox/index.ts';
import type { QuickJsDriver } from '../../src/sandbox/index.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import { defineTool, runProgram, ToolRegistry } from '../../src/tools/index.ts';
import { PIXEL_PNG, startMcpHttpServer } from '../support/mcp-test-server.ts';
import { calls, until } from '../support/mcp-call-log.ts';

const SERVER = new URL('../support/mcp-test-server.ts', import.meta.url).pathname;
const probe = await probePython();

function stdioServer(name: string, callLog: string, more: Partial<McpServerConfig> = {}): McpServerConfig {
  return {
    name,
    command: process.execPath,
    args: ['--import', 'tsx', SERVER],
    env: { MCP_CALL_LOG: callLog },
    ...more,
  };
}

describe('MCP servers as tool providers', () => {
  let dir: string;
  let log: string;
  let mcp: McpServers;
  let driver: QuickJsDriver;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'codecall-mcp-'));
    log = join(dir, 'calls.log');
    mcp = await connectMcpServers({
      servers: [
        stdioServer('gh', log, {
          tools: { 'create-issue': { effect: 'keyed' }, echo: { requiresApproval: true } },
        }),
      ],
    });
    driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
  });
  afterAll(async () => {
    await mcp.close();
    await driver.close();
    await rm(dir, { recursive: true, force: true });
  });

  const js = async (code: string, tools = mcp.tools) => {
    const r = await runProgram({ driver, code, tools, limits: { timeoutMs: 20_000 } });
    if (r.status !== 'succeeded') throw new Error(`${r.error.code}: ${r.error.message}`);
    return r.value;
  };

  it('lists every page of tools as tools.<server>.<tool>, with identifiers for names that are not', () => {
    expect(mcp.servers).toMatchObject([
      {
        name: 'gh',
        transport: 'stdio',
        protocolVersion: '2025-11-25',
        serverName: 'codecall-test-server',
        serverVersion: '1.2.3',
      },
    ]);
    expect(mcp.tools.map((t) => `${t.namespace}.${t.name}`)).toEqual([
      'tools.gh.search',
      'tools.gh.create_issue',
      'tools.gh.labels_set',
      'tools.gh.screenshot',
      'tools.gh.fail',
      'tools.gh.echo',
    ]);
    const search = mcp.tools[0];
    expect(search?.description).toBe('Search the catalogue\nFinds items whose name contains q.');
    expect(search?.outputSchema).toMatchObject({ required: ['hits', 'total'] });
    expect(mcp.tools[1]?.description).toContain('(MCP tool "create-issue" of server gh)');
  });

  it('takes effects from the annotations, and the operator overrides them per tool', () => {
    const effects = Object.fromEntries(mcp.tools.map((t) => [t.name, [t.effect, t.requiresApproval]]));
    expect(effects).toEqual({
      'gh.search': ['read', false], // readOnlyHint
      'gh.create_issue': ['keyed', false], // destructiveHint false alone would be unsafe; overridden by MCP name
      'gh.labels_set': ['idempotent', false], // idempotentHint
      'gh.screenshot': ['read', false],
      'gh.fail': ['read', false],
      'gh.echo': ['unsafe', true], // no annotations: unsafe; approval by the operator
    });
  });

  it('a JavaScript program calls them; results map predictably and isError is MCP_TOOL_ERROR', async () => {
    const before = (await calls(log)).length;
    const value = await js(`
      const found = await tools.gh.search({ q: 'ap' });
      const created = await tools.gh.create_issue({ title: 'hello' });
      const labels = await tools.gh.labels_set({ issue: 1, labels: ['x'] });
      const shot = await tools.gh.screenshot();
      const flat = await tools['gh.search']({ q: 'ban' });
      let failed;
      try { await tools.gh.fail({ why: 'on purpose' }); } catch (e) { failed = [e.name, e.code, e.message]; }
      let missing;
      try { await tools.gh.nope({}); } catch (e) { missing = [e.name, e.code, e.message]; }
      let invalid;
      try { await tools.gh.search({}); } catch (e) { invalid = [e.name, e.code]; }
      return { found, created, labels, shot, flat, failed, missing, invalid, groups: Object.keys(tools) };
    `);
    expect(value).toEqual({
      found: { hits: ['apple', 'apricot'], total: 2 },
      created: expect.stringMatching(/^created issue #\d+: hello$/) as unknown,
      labels: null,
      shot: { type: 'image', mimeType: 'image/png', data: PIXEL_PNG },
      flat: { hits: ['banana'], total: 1 },
      failed: ['ToolError', 'MCP_TOOL_ERROR', 'it failed: on purpose'],
      missing: [
        'NoSuchToolError',
        'NO_SUCH_TOOL',
        'no tool tools.gh.nope; available: search, create_issue, labels_set, screenshot, fail, echo',
      ],
      invalid: ['ToolValidationError', 'TOOL_VALIDATION'],
      groups: ['gh'],
    });
    // The invalid call never reached the server.
    expect((await calls(log)).slice(before).map((l) => l.split(' ')[0])).toEqual([
      'search',
      'create-issue',
      'labels.set',
      'screenshot',
      'search',
      'fail',
    ]);
  });

  it('several text blocks are an array of blocks; host tools sit beside the groups', async () => {
    const host = defineTool({ name: 'add', description: 'adds', effect: 'read', execute: () => 3 });
    expect(
      await js(`return [await tools.add({}), await tools.gh.echo({ text: 'hi' })];`, [host, ...mcp.tools]),
    ).toEqual([
      3,
      [
        { type: 'text', text: 'hi' },
        { type: 'text', text: 'hi' },
      ],
    ]);
    const clash = defineTool({ name: 'gh', description: 'x', execute: () => 1 });
    expect(() => new ToolRegistry([clash, ...mcp.tools])).toThrow(/has the name of a group of tools/);
  });

  it.skipIf(!probe.ok)('a Python program calls them as tools.<server>.<tool>, sync and async', async () => {
    const python = createPythonDriver({ warm: 0 });
    try {
      const r = await runProgram({
        driver: python,
        language: 'python',
        code: [
          'import asyncio',
          "found = tools.gh.search(q='ap')",
          "flat = getattr(tools, 'gh.search')(q='ban')",
          "later = asyncio.run(tools.gh.search_async(q='apr'))",
          'try:',
          "    tools.gh.fail(why='py')",
          'except ToolError as e:',
          '    failed = [e.code, str(e)]',
          'try:',
          '    tools.gh.nope()',
          'except NoSuchToolError as e:',
          '    missing = e.code',
          "final_answer({'found': found, 'flat': flat, 'later': later, 'failed': failed, 'missing': missing})",
        ].join('\n'),
        tools: mcp.tools,
        limits: { timeoutMs: 30_000 },
      });
      if (r.status !== 'succeeded') throw new Error(`${r.error.code}: ${r.error.message}`);
      expect(r.value).toEqual({
        found: { hits: ['apple', 'apricot'], total: 2 },
        flat: { hits: ['banana'], total: 1 },
        later: { hits: ['apricot'], total: 1 },
        failed: ['MCP_TOOL_ERROR', 'it failed: py'],
        missing: 'NO_SUCH_TOOL',
      });
    } finally {
      await python.close();
    }
  });

  it("leaves one listener on the caller's signal however many calls it made (the SDK never removes its own)", async () => {
    const echo = mcp.tools.find((t) => t.name === 'gh.search');
    if (!echo) throw new Error('no gh.search');
    const run = new AbortController();
    for (let i = 0; i < 30; i++) {
      await echo.execute({ q: 'ap' }, { signal: run.signal } as Parameters<typeof echo.execute>[1]);
    }
    // One per server and signal (mcp-call-watch.ts), not one per call.
    expect(getEventListeners(run.signal, 'abort')).toHaveLength(1);
  });

  it("the agent's prompt declares them, typed from their schemas, in TypeScript and Python", () => {
    const ts = systemPrompt('code', mcp.tools, 'javascript');
    expect(ts).toContain('declare const tools: {\n  gh: {\n');
    expect(ts).toContain(
      '    search(args: { q: string; limit?: number }): Promise<{ hits: string[]; total: number }>;',
    );
    expect(ts).toContain('    create_issue(args: { title: string }): Promise<unknown>;');
    // Function-calling mode names them <server>_<tool>; its program calls tools['<server>.<tool>'].
    expect(functionTools(mcp.tools).map((f) => f.spec.name)).toEqual([
      'gh_search',
      'gh_create_issue',
      'gh_labels_set',
      'gh_screenshot',
      'gh_fail',
      'gh_echo',
    ]);
    const py = systemPrompt('code', mcp.tools, 'python');
    expect(py).toContain('class tools:\n    class gh:\n        @staticmethod\n');
    expect(py).toContain('        def search(*, q: str, limit: int | None = None) -> dict:');
    expect(py).toContain('            Requires human approval.');
  });

  it('a durable task: approvals as for host tools, and a resume replays completed calls without calling the server', async () => {
    const store = await createSqliteTaskStore({ path: join(dir, 'tasks.db') });
    const runtime = createRuntime({ store, drivers: [driver], tools: new ToolRegistry(mcp.tools) });
    try {
      await writeFile(log, '');
      const t = await runtime.submit({
        code: `
          const found = await tools.gh.search({ q: 'ap' });
          const said = await tools.gh.echo({ text: found.hits.join(',') });
          return { found, said };
        `,
      });
      const paused = await runtime.run(t.task_id);
      expect(paused).toMatchObject({ status: 'paused', pause_reason: 'approval_required' });
      expect(await calls(log)).toEqual(['search {"q":"ap"}']);
      const approval = paused.pending_approvals[0];
      expect(approval).toMatchObject({ tool: 'tools.gh.echo', arguments: { text: 'apple,apricot' } });
      await runtime.decide(t.task_id, [{ approvalId: approval?.id ?? '', decision: 'approve' }]);
      const done = await runtime.run(t.task_id);
      expect(done).toMatchObject({
        status: 'succeeded',
        result: {
          output: {
            found: { hits: ['apple', 'apricot'], total: 2 },
            said: [
              { type: 'text', text: 'apple,apricot' },
              { type: 'text', text: 'apple,apricot' },
            ],
          },
        },
      });
      // search ran once: the resumed run took its outcome from the journal.
      expect(await calls(log)).toEqual(['search {"q":"ap"}', 'echo {"text":"apple,apricot"}']);
    } finally {
      await runtime.close();
      await store.close();
    }
  });
});

describe('a server that goes away', () => {
  it('fails the call in flight with MCP_UNAVAILABLE and the next call connects again', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'codecall-mcp-exit-'));
    const log = join(dir, 'calls.log');
    const mcp = await connectMcpServers({
      servers: [stdioServer('gh', log, { env: { MCP_CALL_LOG: log, MCP_EXTRA_TOOLS: '1' } })],
    });
    const driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
    try {
      const r = await runProgram({
        driver,
        code: `
          let lost;
          try { await tools.gh.exit(); } catch (e) { lost = e.code; }
          return { lost, after: await tools.gh.search({ q: 'ban' }) };
        `,
        tools: mcp.tools,
      });
      expect(r).toMatchObject({
        status: 'succeeded',
        value: { lost: 'MCP_UNAVAILABLE', after: { hits: ['banana'], total: 1 } },
      });
      expect(await calls(log)).toEqual(['exit {}', 'search {"q":"ban"}']);
    } finally {
      await mcp.close();
      await driver.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('cancelling a call', () => {
  it('an aborted program cancels its MCP call on the server (notifications/cancelled)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'codecall-mcp-cancel-'));
    const log = join(dir, 'calls.log');
    const mcp = await connectMcpServers({
      servers: [stdioServer('gh', log, { env: { MCP_CALL_LOG: log, MCP_EXTRA_TOOLS: '1' } })],
    });
    const driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
    try {
      const controller = new AbortController();
      const running = runProgram({
        driver,
        code: `return await tools.gh.slow();`,
        tools: mcp.tools,
        signal: controller.signal,
      });
      await until(async () => (await calls(log)).includes('slow {}'));
      controller.abort(new Error('stop'));
      expect((await running).status).toBe('failed');
      await until(async () => (await calls(log)).includes('cancelled {"tool":"slow"}'));
    } finally {
      await mcp.close();
      await driver.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('MCP over Streamable HTTP', () => {
  it('connects with headers, lists and calls', async () => {
    const server = await startMcpHttpServer();
    const driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
    const mcp = await connectMcpServers({
      servers: [{ name: 'web', url: server.url, headers: { Authorization: 'Bearer t0ken' } }],
    });
    try {
      expect(mcp.servers[0]).toMatchObject({ transport: 'http', protocolVersion: '2025-11-25' });
      expect(mcp.tools).toHaveLength(6);
      const r = await runProgram({
        driver,
        code: `return await tools.web.search({ q: 'an' });`,
        tools: mcp.tools,
      });
      expect(r).toMatchObject({ status: 'succeeded', value: { hits: ['banana'], total: 1 } });
      expect(server.headers[0]?.authorization).toBe('Bearer t0ken');
    } finally {
      await mcp.close();
      await driver.close();
      await server.close();
    }
  });

  it('a server that cannot be reached fails with MCP_UNAVAILABLE naming it', async () => {
    await expect(
      connectMcpServers({ servers: [{ name: 'gone', url: 'http://127.0.0.1:9/mcp' }] }),
    ).rejects.toMatchObject({ code: 'MCP_UNAVAILABLE', details: { server: 'gone' } });
    await expect(
      connectMcpServers({ servers: [{ name: 'bad', command: '/nonexistent/mcp-server' }] }),
    ).rejects.toMatchObject({ code: 'MCP_UNAVAILABLE' });
  });
});
