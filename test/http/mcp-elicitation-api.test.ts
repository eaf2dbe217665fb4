// An MCP server's elicitation through the HTTP API (issue 22, ADR 0047): the task pauses awaiting_input and its
// view says what the server asks and in which shape; POST .../input answers it and the call made again gets it.
// A real MCP server (test/support/mcp-test-server.ts) over stdio, behind a real runtime and server.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connectMcpServers } from '../../src/mcp/index.ts';
import { CONFIRM_SCHEMA } from '../support/mcp-test-server.ts';
import { useApiFixture } from './api-fixture.ts';

const SERVER = new URL('../support/mcp-test-server.ts', import.meta.url).pathname;
const dir = await mkdtemp(join(tmpdir(), 'codecall-mcp-api-'));
const log = join(dir, 'calls.log');
const mcp = await connectMcpServers({
  servers: [
    {
      name: 'gh',
      command: process.execPath,
      args: ['--import', 'tsx', SERVER],
      env: { MCP_EXTRA_TOOLS: '1', MCP_CALL_LOG: log },
    },
  ],
});
afterAll(async () => {
  await mcp.close();
  await rm(dir, { recursive: true, force: true });
});

describe('an MCP elicitation through the API', () => {
  const fx = useApiFixture('http-mcp-elicitation', { tools: mcp.tools });

  async function until(id: string, status: string): Promise<Record<string, unknown>> {
    for (let i = 0; i < 1000; i++) {
      const view = await fx.runtime.get(id);
      if (view?.status === status) return view as unknown as Record<string, unknown>;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`task ${id} never became ${status}`);
  }

  it('GET shows the message and schema; POST input answers it and the task succeeds', async () => {
    const key = await fx.key('tenant-a');
    const created = await fx.app.inject({
      method: 'POST',
      url: '/api/v1/tasks',
      payload: { code: `return await tools.gh.confirm({ target: 'prod' });` },
      headers: key.headers,
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json<{ task_id: string }>().task_id;
    await until(id, 'paused');
    const view = await fx.app.inject({ url: `/api/v1/tasks/${id}`, headers: key.headers });
    expect(view.json()).toMatchObject({
      status: 'paused',
      pause_reason: 'awaiting_input',
      pending_inputs: [
        {
          call_id: 'call-1~1',
          name: 'tools.gh.confirm',
          for_call: 'call-1',
          message: 'Deploy prod?',
          schema: CONFIRM_SCHEMA,
        },
      ],
    });
    const answered = await fx.app.inject({
      method: 'POST',
      url: `/api/v1/tasks/${id}/input`,
      payload: { name: 'tools.gh.confirm', value: { ok: false } },
      headers: key.headers,
    });
    expect(answered.statusCode, answered.body).toBe(200);
    const done = await until(id, 'succeeded');
    expect(done).toMatchObject({ result: { output: 'not deployed prod (accept)' } });
    const calls = (await readFile(log, 'utf8')).trim().split('\n');
    expect(calls.filter((l) => l.startsWith('confirm '))).toHaveLength(2);
    expect(calls).toContain('elicited {"action":"accept","content":{"ok":false}}');
  });
});
