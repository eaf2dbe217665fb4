import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliTestDir, codecall, lastJson, root, startCodecall, until } from './cli-fixture.ts';

// The `tasks` verbs over HTTP (--url): a real `codecall serve` process, each verb its own process.

// The example tools, plus one that needs approval and one that naps until aborted.
const TOOLS = `
import { defineTool } from 'codecall';
import examples from ${JSON.stringify(join(root, 'examples/tools.ts'))};
export default [
  ...examples,
  defineTool({
    name: 'send_email',
    description: 'sends an email (a human approves each)',
    effect: 'unsafe',
    requiresApproval: true,
    execute: (a) => ({ sent_to: a.to }),
  }),
  defineTool({
    name: 'charge',
    description: 'charges a card (no approval)',
    effect: 'unsafe',
    execute: (a) => 'charged ' + a.amount,
  }),
  defineTool({
    name: 'nap',
    description: 'sleeps ms, unless aborted',
    effect: 'read',
    execute: (a, ctx) => new Promise((resolve, reject) => {
      const t = setTimeout(() => resolve('rested'), a.ms);
      ctx.signal.addEventListener('abort', () => { clearTimeout(t); reject(new Error('aborted')); });
    }),
  }),
];
`;

const WEATHER = `
const w = await tools.get_weather({ city: 'Paris' });
console.log('got', w.sky);
const f = await tools.convert_temperature({ celsius: w.temperature_c });
return { sky: w.sky, fahrenheit: f.fahrenheit };
`;

const EMAIL = `
try {
  return await tools.send_email({ to: 'ada@example.com' });
} catch (e) {
  return 'not sent: ' + e.code;
}
`;

describe('codecall tasks ... --url (the HTTP client)', () => {
  let dir: string;
  let server: ReturnType<typeof startCodecall>;
  let key = '';
  let url = '';
  let at: string[];
  const file = (name: string) => join(dir, name);
  const cli = (...args: string[]) => codecall({}, 'tasks', ...args, ...at);

  beforeAll(async () => {
    dir = await cliTestDir('cli-client');
    await writeFile(file('tools.ts'), TOOLS);
    await writeFile(file('weather.js'), WEATHER);
    await writeFile(file('email.js'), EMAIL);
    await writeFile(file('nap.js'), 'return await tools.nap({ ms: 30000 });\n');
    await writeFile(file('charge.js'), 'await tools.charge({ amount: 1 });\nreturn missing.x;\n');
    await writeFile(file('charge-2.js'), 'return await tools.charge({ amount: 2 });\n');
    // No model from the machine's environment: instruction tasks here fail with MODEL_NOT_CONFIGURED.
    const noModel = { OPENAI_API_KEY: '', OPENAI_BASE_URL: '', MISTRAL_API_KEY: '' };
    server = startCodecall(
      noModel,
      'serve',
      '--port',
      '0',
      '--db',
      file('tasks.db'),
      '--tools',
      file('tools.ts'),
    );
    await until(() => {
      url = /serving on (http:\/\/[^\s]+)/.exec(server.stderr())?.[1] ?? '';
      return url !== '';
    });
    // A first start creates an admin key and prints it once.
    key = /^\s+(cc_\S+)$/m.exec(server.stderr())?.[1] ?? '';
    expect(key).toMatch(/^cc_/);
    at = ['--url', url, '--key', key];
  });
  // A watcher left over by a failed test would hold its stream open and keep the server from stopping.
  const watchers: ReturnType<typeof startCodecall>[] = [];
  const watch = (id: string) => {
    const w = startCodecall({}, 'tasks', 'watch', id, ...at);
    watchers.push(w);
    return w;
  };
  afterAll(async () => {
    for (const w of watchers) w.child.kill('SIGKILL');
    server.child.kill('SIGTERM');
    await server.exited;
    await rm(dir, { recursive: true, force: true });
  });

  it('submits an instruction (agent mode) and a Python program with input files', async () => {
    const agent = await cli(
      'submit',
      '--instruction',
      'say hi',
      '--mode',
      'function_calling',
      '--wait',
      '--json',
    );
    expect(agent.code).toBe(1);
    expect(lastJson(agent.stdout)).toMatchObject({
      status: 'failed',
      instruction: 'say hi',
      mode: 'function_calling',
      error: { code: 'MODEL_NOT_CONFIGURED' },
    });
    const both = await cli('submit', file('weather.js'), '--instruction', 'x');
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('give a program FILE or --instruction TEXT');
    const { probePython } = await import('../src/sandbox/index.ts');
    if (!(await probePython()).ok) {
      console.warn('[cli-client] python part skipped: the python sandbox is not available here');
      return;
    }
    await writeFile(file('rows.csv'), 'a\n1\n2\n3\n');
    await writeFile(file('count.py'), 'len(open("rows.csv").read().split())\n');
    const py = await cli('submit', file('count.py'), '--file', file('rows.csv'), '--wait', '--json');
    expect(py.code).toBe(0);
    expect(lastJson(py.stdout)).toMatchObject({
      status: 'succeeded',
      language: 'python',
      result: { output: 4 },
    });
  });

  it('submits with --wait and prints tool calls, logs, progress and the result as they happen', async () => {
    const r = await cli('submit', file('weather.js'), '--wait', '--timeout', '20', '--memory', '64');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^submitted task task_\w+/m);
    const lines = r.stdout.split('\n');
    const index = (re: RegExp) => lines.findIndex((l) => re.test(l));
    expect(index(/^task +task_\w+ (pending|running)$/)).toBe(0);
    expect(index(/^call +tools\.get_weather\(\{"city":"Paris"\}\)$/)).toBeGreaterThan(0);
    expect(index(/^log +got cloudy$/)).toBeGreaterThan(index(/^done +tools\.get_weather$/));
    expect(index(/^call +tools\.convert_temperature/)).toBeGreaterThan(index(/^log +got cloudy$/));
    expect(index(/^progress +2 tool calls completed, \d+ journal entries$/)).toBeGreaterThan(0);
    expect(index(/^status +succeeded$/)).toBeGreaterThan(index(/^call +tools\.convert_temperature/));
    expect(lines).toContain("result    { sky: 'cloudy', fahrenheit: 57 }");
  });

  it('submits, watches, shows, lists and reads the events of a task', async () => {
    const submitted = await cli('submit', file('weather.js'), '--metadata', '{"run":"ci"}', '--json');
    expect(submitted.code, submitted.stderr).toBe(0);
    const created = lastJson(submitted.stdout);
    expect(created).toMatchObject({ status: 'pending' });
    const id = String(created.task_id);

    const watched = await cli('watch', id);
    expect(watched.code, watched.stderr).toBe(0);
    // Already over when the watch starts: the history comes from the journal.
    expect(watched.stdout).toContain(`task      ${id} succeeded\n`);
    expect(watched.stdout).toMatch(/^call +tools\.convert_temperature\(\{"celsius":14\}\)$/m);

    const shown = await cli('show', id, '--json');
    expect(lastJson(shown.stdout)).toMatchObject({
      task_id: id,
      status: 'succeeded',
      metadata: { run: 'ci' },
      result: { output: { sky: 'cloudy', fahrenheit: 57 } },
    });
    expect((await cli('show', id)).stdout).toMatch(/^status: +succeeded$/m);

    const listed = await cli('list', '--status', 'succeeded', '--json');
    expect((lastJson(listed.stdout).tasks as { task_id: string }[]).map((t) => t.task_id)).toContain(id);
    expect((await cli('list')).stdout).toMatch(new RegExp(`^${id}  succeeded  `, 'm'));

    const events = await cli('events', id, '--json');
    // The journal's entries, in order, among the audit log's (status changes).
    const all = (lastJson(events.stdout).events as { source: string; seq: number; type: string }[]).filter(
      (e) => e.source === 'journal',
    );
    expect(all[0]).toMatchObject({ seq: 1, type: 'task_input' });
    expect(all.map((e) => e.seq)).toEqual(all.map((_e, i) => i + 1));
    expect(all.filter((e) => e.type === 'tool_outcome')).toHaveLength(2);
    const after = await cli('events', id, '--after', '2', '--json');
    const later = lastJson(after.stdout).events as { source: string; seq: number }[];
    expect(later.find((e) => e.source === 'journal')?.seq).toBe(3);
    expect((await cli('events', id)).stdout).toMatch(/^ {4}1 {2}\S+ {2}task_input/m);

    // CODECALL_URL and CODECALL_KEY stand in for the flags.
    const env = await codecall({ CODECALL_URL: url, CODECALL_KEY: key }, 'tasks', 'show', id, '--json');
    expect(lastJson(env.stdout)).toMatchObject({ task_id: id });
  });

  it('approves and rejects pending approvals while a watcher follows the task', async () => {
    for (const decision of ['approve', 'reject'] as const) {
      const id = (await cli('submit', file('email.js'))).stdout.trim();
      expect(id).toMatch(/^task_/);
      const watcher = watch(id);
      const approvalLine = /^approval +(\S+): tools\.send_email\(\{"to":"ada@example\.com"\}\)/m;
      await until(() => approvalLine.test(watcher.stdout()));
      const approval = approvalLine.exec(watcher.stdout())?.[1] ?? '';
      expect(watcher.stdout()).toContain(`codecall tasks approve|reject ${id} ${approval} --url ${url}`);
      if (decision === 'reject') {
        const noReason = await cli('reject', id, approval);
        expect(noReason.code).toBe(2);
        expect(noReason.stderr).toContain('reject needs --reason');
      }
      const decided = await cli(decision, id, approval, '--reason', 'checked', '--json');
      expect(decided.code, decided.stderr).toBe(0);
      expect(await watcher.exited).toBe(0);
      const output = decision === 'approve' ? { sent_to: 'ada@example.com' } : 'not sent: TOOL_REJECTED';
      expect(lastJson((await cli('show', id, '--json')).stdout)).toMatchObject({ result: { output } });
      expect(watcher.stdout()).toMatch(new RegExp(`^decision +${approval} ${decision} by key:\\S+$`, 'm'));
    }
  });

  it('pauses, resumes and cancels a running task; watch exits 1 when it is cancelled', async () => {
    const id = (await cli('submit', file('nap.js'))).stdout.trim();
    const status = async () => lastJson((await cli('show', id, '--json')).stdout).status;
    await until(async () => (await status()) === 'running');
    const watcher = watch(id);
    await until(() => watcher.stdout().includes(`task      ${id} running`));
    expect((await cli('pause', id, '--reason', 'lunch')).code).toBe(0);
    await until(() => /^status +paused \(user_request\)$/m.test(watcher.stdout()));
    expect(watcher.stdout()).toContain(`resume    codecall tasks resume ${id} --url ${url}`);
    const resumed = await cli('resume', id, '--json');
    expect(resumed.code, resumed.stderr).toBe(0);
    await until(async () => (await status()) === 'running');
    const cancelled = await cli('cancel', id, '--reason', 'enough');
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(await watcher.exited).toBe(1);
    expect(watcher.stdout()).toMatch(/^status +cancelled$/m);
    expect(watcher.stdout()).toMatch(/^error +CANCELLED: /m);
    const events = lastJson((await cli('events', id, '--json')).stdout).events as {
      type: string;
      data: Record<string, unknown>;
    }[];
    const controls = events.filter((e) => e.type === 'control' && e.data.action !== 'attempt');
    expect(controls.map((e) => e.data.action)).toEqual(['pause', 'resume', 'cancel']);
  });

  it('resolves a task that needs attention over HTTP: a revision held beside the call it changes, skipped', async () => {
    const id = (await cli('submit', file('charge.js'))).stdout.trim();
    const show = async (t: string) => lastJson((await cli('show', t, '--json')).stdout);
    await until(async () => (await show(id)).status === 'failed');
    // The revision charges another amount: held for a human, naming the earlier charge (ADR 0034).
    const revised = (await cli('revise', id, file('charge-2.js'))).stdout.trim();
    expect(revised).toMatch(/^task_/);
    await until(async () => (await show(revised)).pause_reason === 'needs_attention');

    const wrongAction = await cli('resolve', revised, 'maybe');
    expect(wrongAction.code).toBe(2);
    expect(wrongAction.stderr).toContain('retry, skip or fail');
    const noResult = await cli('resolve', revised, 'skip');
    expect(noResult.code).toBe(2);
    expect(noResult.stderr).toContain('skip needs --result');
    const local = await cli('resolve', revised, 'retry', '--resume');
    expect(local.code).toBe(2);
    expect(local.stderr).toContain('--resume works with --db only');

    const resolved = await cli(
      'resolve',
      revised,
      'skip',
      '--result',
      '"kept the first charge"',
      '--reason',
      'no',
    );
    expect(resolved.code, resolved.stderr).toBe(0);
    await until(async () => (await show(revised)).status === 'succeeded');
    expect(await show(revised)).toMatchObject({ result: { output: 'kept the first charge' } });
    const events = lastJson((await cli('events', revised, '--json')).stdout).events as {
      type: string;
      data: Record<string, unknown>;
    }[];
    expect(events.find((e) => e.type === 'attention_decision')?.data).toMatchObject({ action: 'skip' });
  });

  it('prints server errors as `error CODE: message` with exit 1, usage errors with exit 2', async () => {
    const missing = await cli('show', 'task_nope');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^error NOT_FOUND: no task task_nope$/m);

    const both = await cli('list', '--db', file('tasks.db'));
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('not both');
    const local = await cli('resume', 'task_x', '--force');
    expect(local.code).toBe(2);
    expect(local.stderr).toContain('--force works with --db only');
    const nowhere = await codecall({}, 'tasks', 'submit', file('weather.js'));
    expect(nowhere.code).toBe(2);
    expect(nowhere.stderr).toContain('--url');
    const badTimeout = await cli('submit', file('weather.js'), '--timeout', '-1');
    expect(badTimeout.code).toBe(2);
    const badMeta = await cli('submit', file('weather.js'), '--metadata', '[1]');
    expect(badMeta.code).toBe(2);
    expect(badMeta.stderr).toContain('--metadata must be a JSON object');

    const unreachable = await codecall({}, 'tasks', 'list', '--url', 'http://127.0.0.1:9', '--key', 'k');
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/^error SERVICE_UNREACHABLE: cannot reach http:\/\/127\.0\.0\.1:9/m);
  });

  it('sends the key as a Bearer header; a 401 hints to check --key and exits 2', async () => {
    const wrong = await codecall({}, 'tasks', 'list', '--url', url, '--key', 'cc_wrong');
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/^error UNAUTHORIZED: unknown or revoked API key\nhint: .* check --key/m);
    const right = await codecall({}, 'tasks', 'list', '--url', url, '--key', key, '--json');
    expect(right.code).toBe(0);
  });
});
