// MCP client, the long-call slice (issue 22, ADR 0047): progress, elicitation as awaiting_input, a server that is
// down pausing a durable task, secrets from the environment, and tools/list_changed. Real MCP servers written with
// the SDK (test/support/mcp-test-server.ts) over stdio and Streamable HTTP on loopback; real SQLite tasks.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { connectMcpServers } from '../../src/mcp/index.ts';
import type { McpServerConfig, McpServers } from '../../src/mcp/index.ts';
import { createQuickJsDriver } from '../../src/sandbox/index.ts';
import type { QuickJsDriver } from '../../src/sandbox/index.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import type { SqliteTaskStore } from '../../src/store/index.ts';
import { runProgram, ToolRegistry } from '../../src/tools/index.ts';
import { CONFIRM_SCHEMA, startMcpHttpServer } from '../support/mcp-test-server.ts';
import { calls, until } from '../support/mcp-call-log.ts';
import { createTestPostgresStore, postgresSkipReason, postgresUrl } from '../support/postgres-store.ts';

const SERVER = new URL('../support/mcp-test-server.ts', import.meta.url).pathname;

function stdioServer(name: string, env: Record<string, string>, more: Partial<McpServerConfig> = {}) {
  return {
    name,
    command: process.execPath,
    args: ['--import', 'tsx', SERVER],
    env: { MCP_EXTRA_TOOLS: '1', ...env },
    ...more,
  } satisfies McpServerConfig;
}

let dir: string;
let driver: QuickJsDriver;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'codecall-mcp-durable-'));
  driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
});
afterAll(async () => {
  await driver.close();
  await rm(dir, { recursive: true, force: true });
});

/**
 * A runtime over a fresh SQLite file with these tools; retries come back at once. No runs again for an unreachable
 * server before `max_retries` (default 5, tested on its own) unless `unavailable` says so.
 */
async function durable(
  tools: McpServers['tools'],
  file: string,
  unavailable: { retries: number; baseMs: number } = { retries: 0, baseMs: 1 },
) {
  const store: SqliteTaskStore = await createSqliteTaskStore({ path: join(dir, file) });
  const runtime = createRuntime({
    store,
    drivers: [driver],
    tools: new ToolRegistry(tools),
    retryBaseMs: 1,
    toolUnavailableRetries: unavailable.retries,
    toolUnavailableRetryBaseMs: unavailable.baseMs,
  });
  return {
    store,
    runtime,
    close: async () => {
      await runtime.close();
      await store.close();
    },
  };
}

describe('progress', () => {
  it('a slow tool that reports progress outlives a timeout shorter than its duration; the lines are in the logs', async () => {
    const log = join(dir, 'progress.log');
    // 2 s timeout; the call takes 5 x 0.7 s = 3.5 s, reporting every 0.7 s.
    const mcp = await connectMcpServers({
      servers: [stdioServer('gh', { MCP_CALL_LOG: log }, { timeoutSeconds: 2 })],
    });
    const lines: string[] = [];
    try {
      const r = await runProgram({
        driver,
        code: `return await tools.gh.progress({ steps: 5, gapMs: 700 });`,
        tools: mcp.tools,
        onLog: (e) => lines.push(e.message),
      });
      expect(r).toMatchObject({ status: 'succeeded', value: 'done' });
      expect(r.logs.map((l) => l.message)).toContain('[tools.gh.progress] progress 4/5: step 4');
      expect(lines).toContain('[tools.gh.progress] progress 1/5: step 1');
      // Without progress the same timeout ends the call: the reset is what kept it alive.
      const silent = await runProgram({
        driver,
        code: `try { await tools.gh.progress({ steps: 1, gapMs: 2500 }); return 'ran'; } catch (e) { return e.code + ' ' + e.message; }`,
        tools: mcp.tools,
      });
      expect(silent).toMatchObject({
        status: 'succeeded',
        // A timeout is in doubt (MCP_TIMEOUT), not the tool's error.
        value: expect.stringMatching(/^MCP_TIMEOUT .*no answer in 2 s nor progress/) as unknown,
      });

      // A durable task: the lines reach its stream (events) and stay in its log.
      const { store, runtime, close } = await durable(mcp.tools, 'progress.db');
      try {
        const events: string[] = [];
        const t = await runtime.submit({ code: `return await tools.gh.progress({ steps: 4, gapMs: 150 });` });
        const stop = runtime.subscribe(t.task_id, (e) => {
          if (e.type === 'log') events.push(e.message);
        });
        const done = await runtime.run(t.task_id);
        stop();
        expect(done).toMatchObject({ status: 'succeeded', result: { output: 'done' } });
        expect(events).toContain('[tools.gh.progress] progress 2/4: step 2');
        const record = await store.getTask(t.task_id);
        expect(record?.executionLog?.map((l) => l.message)).toContain(
          '[tools.gh.progress] progress 3/4: step 3',
        );
      } finally {
        await close();
      }
    } finally {
      await mcp.close();
    }
  });

  it('a chatty server: a call logs at most 200 lines, then says so', async () => {
    const mcp = await connectMcpServers({ servers: [stdioServer('gh', {})] });
    try {
      const r = await runProgram({
        driver,
        code: `return await tools.gh.progress({ steps: 260, gapMs: 1 });`,
        tools: mcp.tools,
      });
      expect(r).toMatchObject({ status: 'succeeded', value: 'done' });
      const lines = r.logs.map((l) => l.message).filter((m) => m.startsWith('[tools.gh.progress]'));
      expect(lines).toHaveLength(201);
      expect(lines.at(-1)).toBe('[tools.gh.progress] further lines of this call are not shown (200 written)');
    } finally {
      await mcp.close();
    }
  });

  it('over Streamable HTTP too', async () => {
    const server = await startMcpHttpServer({ extraTools: true });
    const mcp = await connectMcpServers({ servers: [{ name: 'web', url: server.url, timeoutSeconds: 1 }] });
    try {
      const r = await runProgram({
        driver,
        code: `return await tools.web.progress({ steps: 4, gapMs: 400 });`,
        tools: mcp.tools,
      });
      expect(r).toMatchObject({ status: 'succeeded', value: 'done' });
      expect(r.logs.map((l) => l.message)).toContain('[tools.web.progress] progress 3/4: step 3');
    } finally {
      await mcp.close();
      await server.close();
    }
  });
});

describe('elicitation', () => {
  let log: string;
  let mcp: McpServers;
  beforeAll(async () => {
    log = join(dir, 'elicit.log');
    mcp = await connectMcpServers({
      servers: [
        stdioServer('gh', { MCP_CALL_LOG: log }),
        stdioServer('risky', { MCP_CALL_LOG: log }, { tools: { confirm: { effect: 'unsafe' } } }),
      ],
    });
  });
  afterAll(async () => {
    await mcp.close();
  });

  it('a durable task pauses awaiting_input with the message and schema; the answer is given to the call made again', async () => {
    const { runtime, close } = await durable(mcp.tools, 'elicit.db');
    try {
      await writeFile(log, '');
      const t = await runtime.submit({ code: `return await tools.gh.confirm({ target: 'prod' });` });
      const paused = await runtime.run(t.task_id);
      expect(paused).toMatchObject({ status: 'paused', pause_reason: 'awaiting_input' });
      expect(paused.pending_inputs).toEqual([
        {
          call_id: 'call-1~1',
          name: 'tools.gh.confirm',
          deadline: null,
          for_call: 'call-1',
          message: 'Deploy prod?',
          schema: CONFIRM_SCHEMA,
        },
      ]);
      // The call in flight was cancelled: the server's request for input ended without an answer.
      await until(
        async () => (await calls(log)).some((l) => l.startsWith('cancelled {"tool":"confirm"}')),
        3000,
      ).catch(async () => {
        throw new Error(JSON.stringify(await calls(log)));
      });
      await runtime.provideInput(t.task_id, 'tools.gh.confirm', { ok: true });
      const done = await runtime.run(t.task_id);
      expect(done).toMatchObject({ status: 'succeeded', result: { output: 'deployed prod (accept)' } });
      const seen = await calls(log);
      expect(seen.filter((l) => l.startsWith('confirm '))).toHaveLength(2);
      expect(seen).toContain('elicited {"action":"accept","content":{"ok":true}}');
      expect(done.result?.execution_log.map((l) => l.message)).toContain(
        `[tools.gh.confirm] answered the MCP server's request for input ("Deploy prod?"): accept`,
      );

      // An explicit action: decline.
      const d = await runtime.submit({ code: `return await tools.gh.confirm({ target: 'staging' });` });
      expect(await runtime.run(d.task_id)).toMatchObject({ pause_reason: 'awaiting_input' });
      await runtime.provideInput(d.task_id, 'tools.gh.confirm', { action: 'decline' });
      expect(await runtime.run(d.task_id)).toMatchObject({
        status: 'succeeded',
        result: { output: 'not deployed staging (decline)' },
      });
    } finally {
      await close();
    }
  });

  it('an unsafe call cut off for the answer is in doubt: after the answer a human retries it', async () => {
    const { runtime, close } = await durable(mcp.tools, 'elicit-unsafe.db');
    try {
      const t = await runtime.submit({ code: `return await tools.risky.confirm({ target: 'db' });` });
      expect(await runtime.run(t.task_id)).toMatchObject({ pause_reason: 'awaiting_input' });
      await runtime.provideInput(t.task_id, 'tools.risky.confirm', { ok: true });
      const attention = await runtime.run(t.task_id);
      expect(attention).toMatchObject({
        status: 'paused',
        pause_reason: 'needs_attention',
        attention: { call_id: 'call-1', tool: 'tools.risky.confirm' },
      });
      await runtime.resolveAttention(t.task_id, { action: 'retry' });
      expect(await runtime.run(t.task_id)).toMatchObject({
        status: 'succeeded',
        result: { output: 'deployed db (accept)' },
      });
    } finally {
      await close();
    }
  });

  if (postgresUrl() === null) it.skip(postgresSkipReason(), () => undefined);
  else
    it('on PostgreSQL: the request and the answer are journaled there, the call made again gets it', async () => {
      const store = await createTestPostgresStore();
      const runtime = createRuntime({ store, drivers: [driver], tools: new ToolRegistry(mcp.tools) });
      try {
        const t = await runtime.submit({ code: `return await tools.gh.confirm({ target: 'pg' });` });
        expect(await runtime.run(t.task_id)).toMatchObject({
          pause_reason: 'awaiting_input',
          pending_inputs: [{ name: 'tools.gh.confirm', message: 'Deploy pg?', schema: CONFIRM_SCHEMA }],
        });
        await runtime.provideInput(t.task_id, 'tools.gh.confirm', { ok: true });
        expect(await runtime.run(t.task_id)).toMatchObject({
          status: 'succeeded',
          result: { output: 'deployed pg (accept)' },
        });
      } finally {
        await runtime.close();
        await store.close();
      }
    });

  it('a one-off run declines, saying why', async () => {
    const r = await runProgram({
      driver,
      code: `return await tools.gh.confirm({ target: 'prod' });`,
      tools: mcp.tools,
    });
    expect(r).toMatchObject({ status: 'succeeded', value: 'not deployed prod (decline)' });
    expect(r.logs.map((l) => l.message).join('\n')).toMatch(
      /\[tools\.gh\.confirm\] declined the MCP server's request for input \("Deploy prod\?"\): a one-off run cannot pause/,
    );
  });
});

describe('a server that is down', () => {
  it('pauses a durable task (retry later, then needs_attention) instead of failing the call; one-off runs fail it', async () => {
    const log = join(dir, 'down.log');
    const down = join(dir, 'down');
    const pidFile = join(dir, 'server.pid');
    const mcp = await connectMcpServers({
      servers: [stdioServer('gh', { MCP_CALL_LOG: log, MCP_DOWN_FILE: down, MCP_PID_FILE: pidFile })],
    });
    const { runtime, store, close } = await durable(mcp.tools, 'down.db');
    const takeDown = async () => {
      await writeFile(down, '');
      process.kill(Number(await readFile(pidFile, 'utf8')), 'SIGKILL');
      // The connection sees the exit; the next call starts the server again (which will not come up).
      await new Promise((r) => setTimeout(r, 300));
    };
    try {
      await takeDown();
      const t = await runtime.submit({ code: `return await tools.gh.search({ q: 'ap' });`, maxRetries: 1 });
      const waiting = await runtime.run(t.task_id);
      expect(waiting).toMatchObject({ status: 'pending', error: { code: 'TOOL_UNAVAILABLE' } });
      // A read journals its intent with its outcome (ADR 0047, amended 2026-12-07), or alone once it has run past
      // READ_INTENT_AFTER_MS (the server's restart may take that long): one never sent leaves nothing, or its intent
      // marked not_started; either way the next run makes it as a new call.
      const kinds = (await store.readJournal(t.task_id)).map((e) =>
        e.type === 'control' ? e.data.action : e.type,
      );
      expect(kinds.includes('not_started')).toBe(kinds.includes('tool_intent'));
      expect(kinds).not.toContain('tool_outcome');
      // Still down when it runs again (its retries spent): it waits for a human, not failed.
      await new Promise((r) => setTimeout(r, 1_100));
      const attention = await runtime.run(t.task_id);
      expect(attention).toMatchObject({
        status: 'paused',
        pause_reason: 'needs_attention',
        resumable: true,
        attention_calls: [],
        error: { code: 'TOOL_UNAVAILABLE' },
      });
      expect(await calls(log)).toEqual([]);
      // The server comes back: a retry runs the call that was never sent.
      await rm(down);
      await new Promise((r) => setTimeout(r, 2_100));
      await runtime.resume(t.task_id);
      expect(await runtime.run(t.task_id)).toMatchObject({
        status: 'succeeded',
        result: { output: { hits: ['apple', 'apricot'], total: 2 } },
      });
      expect(await calls(log)).toEqual(['search {"q":"ap"}']);

      // A one-off run keeps failing the call with MCP_UNAVAILABLE.
      await takeDown();
      const r = await runProgram({
        driver,
        code: `try { await tools.gh.search({ q: 'x' }); } catch (e) { return [e.code, e.details.unreachable]; }`,
        tools: mcp.tools,
      });
      expect(r).toMatchObject({ status: 'succeeded', value: ['MCP_UNAVAILABLE', 'not_sent'] });
    } finally {
      await close();
      await mcp.close();
    }
  });

  it('runs again by itself while the server is down (its own budget, not max_retries) and goes on when it is back', async () => {
    const log = join(dir, 'back.log');
    const down = join(dir, 'back-down');
    const pidFile = join(dir, 'back.pid');
    const mcp = await connectMcpServers({
      servers: [stdioServer('gh', { MCP_CALL_LOG: log, MCP_DOWN_FILE: down, MCP_PID_FILE: pidFile })],
    });
    // Waits of ~0.25-0.5 s doubling: 8 runs span well over the connection's own backoff (1, 2, 4 s).
    const { runtime, store, close } = await durable(mcp.tools, 'back.db', { retries: 8, baseMs: 500 });
    try {
      await writeFile(down, '');
      process.kill(Number(await readFile(pidFile, 'utf8')), 'SIGKILL');
      await new Promise((r) => setTimeout(r, 300));
      runtime.start();
      // max_retries 0 (the default): only the unavailability budget lets it run again.
      const t = await runtime.submit({ code: `return await tools.gh.search({ q: 'ap' });` });
      const retries = async () =>
        (await store.readJournal(t.task_id)).filter(
          (e) => e.type === 'control' && e.data.action === 'retry' && e.data.code === 'TOOL_UNAVAILABLE',
        ).length;
      for (let i = 0; i < 600 && (await retries()) < 1; i++) await new Promise((r) => setTimeout(r, 50));
      expect(await retries()).toBeGreaterThanOrEqual(1);
      // The server comes back: no human needed.
      await rm(down);
      expect(await runtime.wait(t.task_id, { until: 'terminal' })).toMatchObject({
        status: 'succeeded',
        result: { output: { hits: ['apple', 'apricot'], total: 2 } },
      });
      const record = await store.getTask(t.task_id);
      expect(record?.retries).toBe(0);
      expect(await calls(log)).toEqual(['search {"q":"ap"}']);
    } finally {
      await close();
      await mcp.close();
    }
  }, 120_000);

  it('over Streamable HTTP: a refused connection was never sent; the task runs on when the server is back', async () => {
    let server = await startMcpHttpServer();
    const port = Number(new URL(server.url).port);
    const mcp = await connectMcpServers({ servers: [{ name: 'web', url: server.url }] });
    const { runtime, close } = await durable(mcp.tools, 'http-down.db');
    try {
      await server.close();
      const r = await runProgram({
        driver,
        code: `try { await tools.web.search({ q: 'x' }); } catch (e) { return [e.code, e.details.unreachable]; }`,
        tools: mcp.tools,
      });
      expect(r).toMatchObject({ status: 'succeeded', value: ['MCP_UNAVAILABLE', 'not_sent'] });
      const t = await runtime.submit({ code: `return await tools.web.search({ q: 'an' });` });
      expect(await runtime.run(t.task_id)).toMatchObject({
        status: 'paused',
        pause_reason: 'needs_attention',
        error: { code: 'TOOL_UNAVAILABLE' },
      });
      server = await startMcpHttpServer({ port });
      await runtime.resume(t.task_id);
      expect(await runtime.run(t.task_id)).toMatchObject({
        status: 'succeeded',
        result: { output: { hits: ['banana'], total: 1 } },
      });
    } finally {
      await close();
      await mcp.close();
      await server.close();
    }
  });

  it('a call cut off by the server going away is in doubt: its effect decides (unsafe: a human)', async () => {
    const log = join(dir, 'cut.log');
    const mcp = await connectMcpServers({ servers: [stdioServer('gh', { MCP_CALL_LOG: log })] });
    const { runtime, close } = await durable(mcp.tools, 'cut.db');
    try {
      // `exit` ends the server while it runs the call; it says nothing of its effect: unsafe.
      const t = await runtime.submit({ code: `return await tools.gh.exit();`, maxRetries: 1 });
      expect(await runtime.run(t.task_id)).toMatchObject({
        status: 'pending',
        error: { code: 'TOOL_UNAVAILABLE' },
      });
      expect(await runtime.run(t.task_id)).toMatchObject({
        status: 'paused',
        pause_reason: 'needs_attention',
        attention_calls: [{ call_id: 'call-1', tool: 'tools.gh.exit' }],
      });
      expect(await calls(log)).toEqual(['exit {}']);
    } finally {
      await close();
      await mcp.close();
    }
  });
});

describe('secrets from the environment', () => {
  it('{{env:NAME}} in headers and env is read at connect; a missing one is INVALID_CONFIG; values never show', async () => {
    const server = await startMcpHttpServer();
    const secret = 'sk-very-secret-4711';
    try {
      const mcp = await connectMcpServers({
        servers: [{ name: 'web', url: server.url, headers: { Authorization: 'Bearer {{env:WEB_TOKEN}}' } }],
        environment: { WEB_TOKEN: secret },
      });
      try {
        expect(server.headers[0]?.authorization).toBe(`Bearer ${secret}`);
        expect(JSON.stringify(mcp.servers)).not.toContain(secret);
      } finally {
        await mcp.close();
      }
      // stdio: the server's variable comes from codecall's.
      const log = join(dir, 'env.log');
      const viaEnv = await connectMcpServers({
        servers: [stdioServer('gh', { MCP_CALL_LOG: '{{env:LOG_PATH}}' })],
        environment: { LOG_PATH: log },
      });
      try {
        await runProgram({ driver, code: `return await tools.gh.search({ q: 'b' });`, tools: viaEnv.tools });
        expect(await calls(log)).toEqual(['search {"q":"b"}']);
      } finally {
        await viaEnv.close();
      }
      const missing = connectMcpServers({
        servers: [{ name: 'web', url: server.url, headers: { Authorization: 'Bearer {{env:NOPE_TOKEN}}' } }],
        environment: {},
      });
      await expect(missing).rejects.toMatchObject({
        code: 'INVALID_CONFIG',
        message:
          'MCP server web: headers.Authorization needs the environment variable NOPE_TOKEN, which is not set',
      });
    } finally {
      await server.close();
    }
  });

  it('a server that echoes the secret in its refusal: the error shows *** instead', async () => {
    const secret = 'sk-echoed-secret-0815';
    const http = createServer((req, res) => {
      res.writeHead(401, { 'content-type': 'text/plain' });
      res.end(`bad token: ${String(req.headers.authorization)}`);
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    const { port } = http.address() as AddressInfo;
    try {
      const error = await connectMcpServers({
        servers: [
          { name: 'web', url: `http://127.0.0.1:${port}/mcp`, headers: { Authorization: '{{env:T}}' } },
        ],
        environment: { T: secret },
      }).catch((e: unknown) => e as Error);
      expect(error).toMatchObject({ code: 'MCP_UNAVAILABLE' });
      expect((error as Error).message).toContain('bad token: ***');
      expect(JSON.stringify(error)).not.toContain(secret);
      expect((error as Error).message).not.toContain(secret);
    } finally {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    }
  });
});

describe('time bounds on a call', () => {
  it('a server that reports progress forever is cut off at maxCallSeconds: cancelled, MCP_TIMEOUT in doubt', async () => {
    const log = join(dir, 'forever.log');
    const mcp = await connectMcpServers({
      servers: [{ ...stdioServer('gh', { MCP_CALL_LOG: log }), timeoutSeconds: 5, maxCallSeconds: 1.5 }],
    });
    try {
      const started = Date.now();
      const r = await runProgram({
        driver,
        code: `try { await tools.gh.progress({ steps: 100000, gapMs: 100 }); return 'ended'; }
               catch (e) { return [e.code, e.details.unreachable, e.details.timeout_seconds]; }`,
        tools: mcp.tools,
        limits: { timeoutMs: 120_000 },
      });
      expect(r).toMatchObject({ status: 'succeeded', value: ['MCP_TIMEOUT', 'in_doubt', 1.5] });
      // Long before the program's own limit, and the server was told to stop.
      expect(Date.now() - started).toBeLessThan(60_000);
      await until(async () => (await calls(log)).includes('cancelled {"tool":"progress"}'));
    } finally {
      await mcp.close();
    }
  });

  it('a request timeout is in doubt, not an outcome: a read call runs again, an unsafe one waits for a human', async () => {
    const log = join(dir, 'timeout.log');
    const servers = [
      { ...stdioServer('gh', { MCP_CALL_LOG: log }), timeoutSeconds: 1 },
      // The same server, its silent `slow` said to be unsafe.
      {
        ...stdioServer('un', { MCP_CALL_LOG: log }),
        timeoutSeconds: 1,
        tools: { slow: { effect: 'unsafe' as const } },
      },
    ];
    const mcp = await connectMcpServers({ servers });
    const { runtime, store, close } = await durable(mcp.tools, 'timeout.db', { retries: 1, baseMs: 1 });
    try {
      const read = await runtime.submit({ code: `return await tools.gh.slow();` });
      expect(await runtime.run(read.task_id)).toMatchObject({
        status: 'pending',
        error: { code: 'TOOL_UNAVAILABLE' },
      });
      const journal = await store.readJournal(read.task_id);
      // A read cut off after its timeout (1 s, past READ_INTENT_AFTER_MS) left its intent, and no outcome.
      expect(journal.filter((e) => e.type === 'tool_intent')).toHaveLength(1);
      expect(journal.filter((e) => e.type === 'tool_outcome')).toHaveLength(0);
      // The next run makes the read call again (and it times out again: the budget spent, a human).
      await new Promise((r) => setTimeout(r, 50));
      expect(await runtime.run(read.task_id)).toMatchObject({
        status: 'paused',
        pause_reason: 'needs_attention',
        attention_calls: [],
        error: { code: 'TOOL_UNAVAILABLE' },
      });
      expect((await calls(log)).filter((l) => l === 'slow {}')).toHaveLength(2);

      const unsafe = await runtime.submit({ code: `return await tools.un.slow();` });
      expect(await runtime.run(unsafe.task_id)).toMatchObject({ status: 'pending' });
      await new Promise((r) => setTimeout(r, 50));
      // Never made again: it may have run.
      expect(await runtime.run(unsafe.task_id)).toMatchObject({
        status: 'paused',
        pause_reason: 'needs_attention',
        attention_calls: [{ call_id: 'call-1', tool: 'tools.un.slow' }],
      });
      expect((await calls(log)).filter((l) => l === 'slow {}')).toHaveLength(3);
    } finally {
      await close();
      await mcp.close();
    }
  }, 120_000);
});

describe('notifications/tools/list_changed', () => {
  it('lists the tools again for new tasks; a registry made before (a running task) keeps its own', async () => {
    const log = join(dir, 'changed.log');
    const changed: string[] = [];
    const mcp = await connectMcpServers({
      servers: [stdioServer('gh', { MCP_CALL_LOG: log })],
      onToolsChanged: (server) => changed.push(server),
    });
    try {
      const before = new ToolRegistry(mcp.tools);
      expect(mcp.tools.map((t) => t.name)).not.toContain('gh.late');
      const r = await runProgram({ driver, code: `return await tools.gh.add_tool();`, tools: mcp.tools });
      expect(r).toMatchObject({ status: 'succeeded', value: 'added' });
      await until(() => changed.length > 0);
      expect(changed).toEqual(['gh']);
      expect(mcp.tools.map((t) => t.name)).toContain('gh.late');
      expect(mcp.servers[0]?.tools.map((t) => t.name)).toContain('gh.late');
      expect(before.get('tools', 'gh.late')).toBeUndefined();
      const next = await runProgram({ driver, code: `return await tools.gh.late();`, tools: mcp.tools });
      expect(next).toMatchObject({ status: 'succeeded', value: 'late' });
      const old = await runProgram({
        driver,
        code: `try { await tools.gh.late(); } catch (e) { return e.code; }`,
        tools: before,
      });
      expect(old).toMatchObject({ status: 'succeeded', value: 'NO_SUCH_TOOL' });
    } finally {
      await mcp.close();
    }
  });
});
