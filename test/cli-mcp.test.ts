// `--mcp` and `--mcp-config` of the built CLI (ADR 0047): `tools list`, `exec`, and a durable `exec --db` whose
// approval resumes with the MCP servers remembered with the task. A real MCP server (test/support).
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, codecall, lastJson } from './cli-fixture.ts';
import { reply, startScriptedModelServer } from './model/scripted-model-server.ts';

const SERVER = `gh=${process.execPath} --import tsx test/support/mcp-test-server.ts`;

describe('codecall with MCP servers (the built CLI)', () => {
  let dir: string;
  beforeAll(async () => {
    assertBuilt();
    dir = await mkdtemp(join(tmpdir(), 'codecall-cli-mcp-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('tools list shows their names, effects and descriptions, and their declarations', async () => {
    const r = await codecall({}, 'tools', 'list', '--mcp', SERVER);
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(6);
    expect(lines[0]).toMatch(/^tools\.gh\.search +read +Search the catalogue$/);
    expect(lines[1]).toMatch(/^tools\.gh\.create_issue +unsafe +Opens an issue\.$/);
    expect(r.stderr).toContain(
      'MCP server gh: codecall-test-server 1.2.3 (stdio, protocol 2025-11-25), 6 tools',
    );
    const json = lastJson((await codecall({}, 'tools', 'list', '--mcp', SERVER, '--json')).stdout);
    expect(json.tools).toContainEqual(
      expect.objectContaining({
        name: 'tools.gh.labels_set',
        effect: 'idempotent',
        requires_approval: false,
      }),
    );
    const ts = await codecall({}, 'tools', 'list', '--mcp', SERVER, '--declarations');
    expect(ts.stdout).toContain('declare const tools: {\n  gh: {\n');
    const py = await codecall({}, 'tools', 'list', '--mcp', SERVER, '--declarations', '--language', 'python');
    expect(py.stdout).toContain('class tools:\n    class gh:\n');
  });

  it("run --mcp: the model's prompt declares them and its code calls them", async () => {
    const model = await startScriptedModelServer();
    try {
      model.push(
        reply({
          content: '```js\nconst r = await tools.gh.search({ q: "ap" });\nfinal_answer(r.total)\n```',
        }),
      );
      const r = await codecall(
        { OPENAI_API_KEY: '', OPENAI_BASE_URL: '', MISTRAL_API_KEY: '' },
        'run',
        'How many?',
        '--mcp',
        SERVER,
        '--provider',
        'openai',
        '--base-url',
        model.baseUrl,
        '--model',
        'scripted',
        '--api-key',
        'k',
        '--json',
      );
      expect(r.code).toBe(0);
      expect(lastJson(r.stdout)).toMatchObject({ status: 'succeeded', result: { output: 2 } });
      const messages = model.requests[0]?.body.messages as { role: string; content: string }[];
      expect(messages[0]?.content).toContain('declare const tools: {\n  gh: {\n');
    } finally {
      await model.close();
    }
  });

  it('run --db: an agent step whose tool elicits pauses awaiting_input; tasks input --resume runs the step on', async () => {
    const model = await startScriptedModelServer();
    try {
      model.push(reply({ content: "```js\nfinal_answer(await tools.gh.confirm({ target: 'prod' }))\n```" }));
      const env = { OPENAI_API_KEY: 'k', OPENAI_BASE_URL: model.baseUrl, MISTRAL_API_KEY: '' };
      const config = join(dir, 'agent-mcp.json');
      await writeFile(
        config,
        JSON.stringify([
          {
            name: 'gh',
            command: process.execPath,
            args: ['--import', 'tsx', 'test/support/mcp-test-server.ts'],
            env: { MCP_EXTRA_TOOLS: '1' },
          },
        ]),
      );
      const db = join(dir, 'agent.db');
      const paused = await codecall(env, 'run', 'Deploy prod', '--mcp-config', config, '--db', db, '--json');
      const view = lastJson(paused.stdout) as { task_id: string };
      expect(view, paused.stdout + paused.stderr).toMatchObject({
        status: 'paused',
        pause_reason: 'awaiting_input',
        pending_inputs: [{ name: 'tools.gh.confirm', message: 'Deploy prod?', for_call: 's1.call-1' }],
      });
      const answered = await codecall(
        env,
        'tasks',
        'input',
        view.task_id,
        'tools.gh.confirm',
        '{"ok":true}',
        '--db',
        db,
        '--resume',
        '--json',
      );
      expect(answered.code, answered.stdout + answered.stderr).toBe(0);
      expect(lastJson(answered.stdout)).toMatchObject({
        status: 'succeeded',
        result: { output: 'deployed prod (accept)' },
      });
      // The step's code ran on with the answer: the model was asked once.
      expect(model.requests).toHaveLength(1);
    } finally {
      await model.close();
    }
  });

  it('exec --mcp runs a program that calls them', async () => {
    const file = join(dir, 'prog.js');
    await writeFile(
      file,
      `const found = await tools.gh.search({ q: 'ap' });
       let failed; try { await tools.gh.fail({ why: 'cli' }); } catch (e) { failed = e.code + ': ' + e.message; }
       return { found, failed };`,
    );
    const r = await codecall({}, 'exec', file, '--mcp', SERVER, '--json');
    expect(r.code).toBe(0);
    expect(lastJson(r.stdout)).toMatchObject({
      status: 'succeeded',
      result: { found: { hits: ['apple', 'apricot'], total: 2 }, failed: 'MCP_TOOL_ERROR: it failed: cli' },
    });
  });

  it('exec --db --mcp-config: an approval pauses the task; approve --resume reconnects and replays', async () => {
    const log = join(dir, 'calls.log');
    const config = join(dir, 'mcp.json');
    await writeFile(
      config,
      JSON.stringify({
        mcpServers: [
          {
            name: 'gh',
            command: process.execPath,
            args: ['--import', 'tsx', 'test/support/mcp-test-server.ts'],
            env: { MCP_CALL_LOG: log },
            tools: { 'create-issue': { requiresApproval: true } },
          },
        ],
      }),
    );
    const file = join(dir, 'durable.js');
    await writeFile(
      file,
      `const found = await tools.gh.search({ q: 'ban' });
       return await tools.gh.create_issue({ title: found.hits[0] });`,
    );
    const db = join(dir, 'tasks.db');
    const paused = await codecall({}, 'exec', file, '--db', db, '--mcp-config', config, '--json');
    const view = lastJson(paused.stdout) as {
      task_id: string;
      status: string;
      pending_approvals: { id: string; tool: string }[];
    };
    expect(view).toMatchObject({ status: 'paused', pending_approvals: [{ tool: 'tools.gh.create_issue' }] });
    const approved = await codecall(
      {},
      'tasks',
      'approve',
      view.task_id,
      view.pending_approvals[0]?.id ?? '',
      '--db',
      db,
      '--resume',
      '--json',
    );
    expect(approved.code).toBe(0);
    expect(lastJson(approved.stdout)).toMatchObject({
      status: 'succeeded',
      result: { output: 'created issue #1: banana' },
    });
    // search ran once (the resumed run replayed it), create-issue once, in the resumed run's server.
    const calls = (await readFile(log, 'utf8')).trim().split('\n');
    expect(calls).toEqual(['search {"q":"ban"}', 'create-issue {"title":"banana"}']);
  });

  it('exec --db: an elicitation pauses awaiting_input with its message; tasks input --resume answers it; {{env:...}} secrets never show', async () => {
    const log = join(dir, 'elicit.log');
    const secret = 'ghp-cli-secret-8642';
    const config = join(dir, 'elicit.json');
    await writeFile(
      config,
      JSON.stringify([
        {
          name: 'gh',
          command: process.execPath,
          args: ['--import', 'tsx', 'test/support/mcp-test-server.ts'],
          env: {
            MCP_CALL_LOG: '{{env:CALL_LOG}}',
            MCP_EXTRA_TOOLS: '1',
            GH_TOKEN: 'Bearer {{env:GH_TOKEN}}',
          },
        },
      ]),
    );
    const env = { CALL_LOG: log, GH_TOKEN: secret };
    const file = join(dir, 'elicit.js');
    await writeFile(file, `return await tools.gh.confirm({ target: 'prod' });`);
    const db = join(dir, 'elicit.db');
    const paused = await codecall(env, 'exec', file, '--db', db, '--mcp-config', config, '--json');
    const view = lastJson(paused.stdout) as { task_id: string };
    expect(view).toMatchObject({
      status: 'paused',
      pause_reason: 'awaiting_input',
      pending_inputs: [{ name: 'tools.gh.confirm', message: 'Deploy prod?', for_call: 'call-1' }],
    });
    expect(paused.stderr).toContain(
      'waiting for input "tools.gh.confirm"\n  Deploy prod?\n  answer as: {"type":"object"',
    );
    const answered = await codecall(
      env,
      'tasks',
      'input',
      view.task_id,
      'tools.gh.confirm',
      '{"ok":true}',
      '--db',
      db,
      '--resume',
      '--json',
    );
    expect(answered.code).toBe(0);
    expect(lastJson(answered.stdout)).toMatchObject({
      status: 'succeeded',
      result: { output: 'deployed prod (accept)' },
    });
    const shown = await codecall(env, 'tasks', 'show', view.task_id, '--db', db, '--json');
    const listed = await codecall(env, 'tools', 'list', '--mcp-config', config, '--json');
    expect(listed.code).toBe(0);
    for (const r of [paused, answered, shown, listed]) expect(r.stdout + r.stderr).not.toContain(secret);
    // A variable that is not set stops the command before any server starts.
    const missing = await codecall({ CALL_LOG: log, GH_TOKEN: '' }, 'tools', 'list', '--mcp-config', config);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('INVALID_CONFIG');
    expect(missing.stderr).toContain(
      'env.GH_TOKEN needs the environment variable GH_TOKEN, which is not set',
    );
  });
});
