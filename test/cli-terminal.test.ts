import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { probePython } from '../src/internal.ts';
import { assertBuilt, codecall as codecallWith, lastJson } from './cli-fixture.ts';

const codecall = (...args: string[]) => codecallWith({}, ...args);

/** Sequences a terminal acts on, each as a program writes it (a JS string literal's escapes). */
const SEQUENCES: readonly [string, string, string][] = [
  ['CSI colour', '\\x1b[31mred\\x1b[0m', '\u001b[31m'],
  ['OSC 8 link', '\\x1b]8;;https://evil.example\\x07click\\x1b]8;;\\x07', '\u001b]8;;'],
  ['OSC window title', '\\x1b]0;owned\\x07', '\u001b]0;'],
  ['BEL', 'ring\\x07', '\u0007'],
  ['backspace', 'safe\\b\\b\\b\\bevil', '\b'],
  ['CR that overwrites', 'rm -rf /\\rls', '\r'],
  ['C1 CSI', '\\u009b31mred', '\u009b'],
  ['C1 OSC', '\\u009d0;title\\u009c', '\u009d'],
  ['bidi override', 'abc\\u202edcba', '\u202e'],
  ['bidi isolate', 'x\\u2066y\\u2069', '\u2066'],
  ['DEL', 'a\\x7fb', '\u007f'],
];

/** Every raw control or bidi character a terminal acts on (tab and newline are text). */
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

async function programFile(body: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'codecall-term-'));
  const file = join(dir, 'evil.js');
  await writeFile(file, body);
  return file;
}

describe('codecall prints guest text safely to a terminal (issue 15 class 12)', () => {
  beforeAll(() => {
    assertBuilt();
  });

  const all = SEQUENCES.map(([, literal]) => literal).join(' | ');

  it('neutralises escapes in logs (every level) and the result without --json; --json keeps them exactly', async () => {
    const file = await programFile(
      [
        `const s = '${all}';`,
        'console.log(s);',
        'console.warn(s);',
        'console.error(s);',
        'return { text: s, [s]: 1 };',
      ].join('\n'),
    );
    const human = await codecall('exec', file);
    expect(human.code).toBe(0);
    expect(human.stdout).not.toMatch(RAW);
    expect(human.stderr).not.toMatch(RAW);
    // What was neutralised is still shown, as its escape.
    expect(human.stderr).toContain('\\x1b[31mred');
    expect(human.stderr).toContain('\\u202e');
    const json = await codecall('exec', file, '--json');
    expect(json.stderr).not.toMatch(RAW);
    const out = lastJson(json.stdout);
    const exact = SEQUENCES.map(([, , raw]) => raw);
    const text = (out.result as { text: string }).text;
    for (const raw of exact) expect(text).toContain(raw);
    expect((out.logs as { message: string }[]).map((l) => l.message)).toEqual([text, text, text]);
  });

  it.each([
    ['an uncaught Error', `new Error('${all}')`],
    ['a ToolError', `new ToolError('${all}', 'E_TERM')`],
  ])('neutralises every sequence in %s; --json keeps its message exactly', async (_name, thrown) => {
    const file = await programFile(`throw ${thrown};\n`);
    const human = await codecall('exec', file);
    expect(human.code).toBe(1);
    expect(human.stdout + human.stderr).not.toMatch(RAW);
    expect(human.stderr).toContain('failed:');
    const json = lastJson((await codecall('exec', file, '--json')).stdout);
    const message = (json.error as { message: string }).message;
    for (const [, , raw] of SEQUENCES) expect(message).toContain(raw);
  });

  it("neutralises escapes in a durable task's output and in `tasks show`", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'codecall-term-db-'));
    const db = join(dir, 'tasks.db');
    const file = await programFile(`console.log('${all}');\nthrow new Error('${all}');\n`);
    const run = await codecall('exec', file, '--db', db);
    expect(run.stdout + run.stderr).not.toMatch(RAW);
    expect(run.stderr).toContain('\\x1b');
    const list = await codecall('tasks', 'list', '--db', db, '--json');
    const id = (lastJson(list.stdout).tasks as { task_id: string }[])[0]?.task_id ?? '';
    const show = await codecall('tasks', 'show', id, '--db', db, '--journal');
    expect(show.stdout + show.stderr).not.toMatch(RAW);
    expect(show.stdout).toContain('\\x1b');
    const exact = lastJson((await codecall('tasks', 'show', id, '--db', db, '--json')).stdout);
    expect((exact.error as { message: string }).message).toContain('\u001b[31m');
  });

  it("neutralises escapes in a python program's artifact names and prints; --json keeps the names exactly", async (ctx) => {
    const probe = await probePython();
    if (!probe.ok) return ctx.skip(`python sandbox unavailable: ${probe.reason}`);
    const dir = await mkdtemp(join(tmpdir(), 'codecall-term-py-'));
    const file = join(dir, 'evil.py');
    await writeFile(
      file,
      "name = '\\x1b]8;;evil\\x07x\\x1b]8;;\\x07\\u202e.txt'\nopen(name, 'w').write('x')\nprint('\\x1b[2J\\rgone')\nname\n",
    );
    const human = await codecall('exec', file);
    expect(human.code).toBe(0);
    expect(human.stdout + human.stderr).not.toMatch(RAW);
    expect(human.stderr).toContain('artifact \\x1b]8;;');
    const json = lastJson((await codecall('exec', file, '--json')).stdout);
    const names = (json.artifacts as { name: string }[]).map((a) => a.name);
    expect(names).toEqual(['\u001b]8;;evil\u0007x\u001b]8;;\u0007\u202e.txt']);
    expect((json.logs as { message: string }[])[0]?.message).toBe('\u001b[2J\rgone');
  });
});
