// The budget flags (ADR 0044) through the built CLI: `exec --db`, `tasks submit --url` against a real `codecall
// serve` (whose --max-task-tool-calls ceiling refuses more), malformed values, and --help.
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliTestDir, codecall, lastJson, startCodecall, until } from './cli-fixture.ts';

const TOOLS = `
import { defineTool } from 'codecall';
export default [
  defineTool({ name: 'ping', description: 'pings', effect: 'read', execute: () => 'pong' }),
  defineTool({ name: 'echo', description: 'echoes', effect: 'read', execute: () => 'echo' }),
];
`;

/** ping 3 times, then echo twice; each refusal as [budget, limit]. */
const PROGRAM = `
const out = [];
for (const t of ['ping', 'ping', 'ping', 'echo', 'echo']) {
  try { out.push(await tools[t]({})); } catch (e) { out.push([e.details.budget, e.details.limit]); }
}
return out;
`;

describe('budget flags', () => {
  let dir = '';
  const file = (name: string) => join(dir, name);
  let server: ReturnType<typeof startCodecall>;
  let at: string[] = [];
  beforeAll(async () => {
    dir = await cliTestDir('cli-budgets');
    await writeFile(file('tools.ts'), TOOLS);
    await writeFile(file('calls.js'), PROGRAM);
    server = startCodecall(
      {},
      'serve',
      '--port',
      '0',
      '--db',
      file('served.db'),
      '--tools',
      file('tools.ts'),
      '--max-task-tool-calls',
      '4',
    );
    let url = '';
    await until(() => {
      url = /serving on (http:\/\/[^\s]+)/.exec(server.stderr())?.[1] ?? '';
      return url !== '';
    });
    const key = /^\s+(cc_\S+)$/m.exec(server.stderr())?.[1] ?? '';
    at = ['--url', url, '--key', key];
  });
  afterAll(async () => {
    server.child.kill('SIGTERM');
    await server.exited;
    await rm(dir, { recursive: true, force: true });
  });

  it('exec --db runs the task under the budgets the flags give', async () => {
    const run = await codecall(
      {},
      'exec',
      file('calls.js'),
      '--db',
      file('exec.db'),
      '--tools',
      file('tools.ts'),
      '--max-calls',
      '3',
      '--tool-max-calls',
      'tools.ping=2',
      '--tool-max-seconds',
      'tools.echo=30',
      '--json',
    );
    expect(run.code, run.stderr).toBe(0);
    expect(lastJson(run.stdout).result).toMatchObject({
      output: ['pong', 'pong', ['tool_max_calls', 2], 'echo', ['max_calls', 3]],
    });
    expect(lastJson(run.stdout).budgets).toMatchObject({
      max_calls: 3,
      tools: { 'tools.ping': { max_calls: 2 }, 'tools.echo': { max_wall_seconds: 30 } },
    });
  });

  it('tasks submit --url sends them as tool_constraints.budgets, within the service ceiling', async () => {
    const ok = await codecall(
      {},
      'tasks',
      'submit',
      file('calls.js'),
      ...at,
      '--tool-max-calls',
      'tools.ping=1',
      '--max-cost',
      '2.5',
      '--wait',
      '--json',
    );
    expect(ok.code, ok.stderr).toBe(0);
    const view = lastJson(ok.stdout);
    expect(view.result).toMatchObject({
      output: ['pong', ['tool_max_calls', 1], ['tool_max_calls', 1], 'echo', ['max_cost', 2.5]],
    });
    expect(view.budgets).toMatchObject({ max_cost: 2.5, tools: { 'tools.ping': { max_calls: 1 } } });
    // Without flags the service's ceiling (4 calls) is the task's budget.
    const plain = await codecall({}, 'tasks', 'submit', file('calls.js'), ...at, '--wait', '--json');
    expect(lastJson(plain.stdout).result).toMatchObject({
      output: ['pong', 'pong', 'pong', 'echo', ['max_calls', 4]],
    });
    const above = await codecall({}, 'tasks', 'submit', file('calls.js'), ...at, '--max-calls', '5');
    expect(above.code).not.toBe(0);
    expect(above.stderr).toMatch(/INVALID_ARGUMENT.*tool_constraints\.budgets\.max_calls must be at most 4/);
  });

  it.each([
    [['--max-calls', '-1'], /--max-calls must be an integer of 0 or more, not "-1"/],
    [['--max-calls', '2.5'], /--max-calls must be an integer/],
    [['--max-cost', 'lots'], /--max-cost must be a number of 0 or more, not "lots"/],
    [
      ['--tool-max-calls', 'tools.ping'],
      /--tool-max-calls must be TOOL=N \(tools\.search=5\), not "tools\.ping"/,
    ],
    [['--tool-max-calls', 'ping=2'], /--tool-max-calls ping=2: must be named "namespace\.name"/],
    [['--tool-max-calls', 'egress.read=2'], /--tool-max-calls egress\.read=2: is fetch's/],
    [['--tool-max-seconds', 'tools.ping=soon'], /--tool-max-seconds tools\.ping must be a number/],
    [['--tool-max-calls', 'tools.ping=1', '--tool-max-calls', 'tools.ping=2'], /names tools\.ping twice/],
  ])('refuses %j with a message naming the flag', async (flags, message) => {
    const exec = await codecall({}, 'exec', file('calls.js'), '--db', file('bad.db'), ...flags);
    expect(exec.code).not.toBe(0);
    expect(exec.stderr).toMatch(message);
    const submit = await codecall({}, 'tasks', 'submit', file('calls.js'), ...at, ...flags);
    expect(submit.stderr).toMatch(message);
    const run = await codecall({}, 'run', 'say hi', ...flags);
    expect(run.stderr).toMatch(message);
  });

  it('refuses budgets for a program run once (exec without --db), and documents the flags', async () => {
    const once = await codecall({}, 'exec', file('calls.js'), '--max-calls', '1');
    expect(once.code).not.toBe(0);
    expect(once.stderr).toMatch(/budget flags .* need --db PATH/);
    for (const command of [['exec'], ['run'], ['tasks', 'submit']]) {
      const help = (await codecall({}, ...command, '--help')).stdout;
      for (const flag of [
        '--max-calls <n>',
        '--max-cost <n>',
        '--tool-max-calls <tool=n>',
        '--tool-max-seconds <tool=s>',
      ])
        expect(help, command.join(' ')).toContain(flag);
    }
  });
});
