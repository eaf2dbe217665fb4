// Forms Python programs (and smolagents' habits) use: final_answer(answer=...), the last statement's value, fenced
// blocks, multiprocessing under the process policy, a dict with keys that are not strings as the result. For real in bubblewrap.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toJsonView } from '../../src/codec/index.ts';
import { createPythonDriver, probePython } from '../../src/sandbox/index.ts';
import type { PythonDriver } from '../../src/sandbox/index.ts';
import type { ExecutionResult, SandboxPolicy } from '../../src/spec/index.ts';

const probe = await probePython();

describe.skipIf(!probe.ok)(`python program forms${probe.ok ? '' : ` (skipped: ${probe.reason})`}`, () => {
  let driver: PythonDriver;
  beforeAll(async () => {
    driver = createPythonDriver({ warm: 1 });
    await driver.ready();
  });
  afterAll(() => driver.close());
  const run = (code: string, policy?: SandboxPolicy, timeoutMs = 20_000): Promise<ExecutionResult> =>
    driver.execute({
      code,
      language: 'python',
      tools: [],
      host: { call: () => Promise.resolve({ ok: true, value: null }) },
      limits: { timeoutMs },
      ...(policy ? { policy } : {}),
    });
  const value = (r: ExecutionResult) => {
    if (r.status !== 'succeeded') throw new Error(`${r.error.code}: ${r.error.message}`);
    return r.value;
  };

  it('final_answer(answer=x) ends the program as final_answer(x) does (value=x too)', async () => {
    expect(value(await run('final_answer(answer={"n": 1})\n2'))).toEqual({ n: 1 });
    expect(value(await run('final_answer([1, 2])\n3'))).toEqual([1, 2]);
    expect(value(await run('final_answer(value="v")'))).toBe('v');
    for (const code of ['final_answer()', 'final_answer(1, 2)', 'final_answer(answer=1, other=2)']) {
      const r = await run(code);
      expect(r.status).toBe('failed');
      if (r.status === 'failed') {
        expect(r.error.name).toBe('TypeError');
        expect(r.error.message).toContain('final_answer(answer=x)');
      }
    }
  });

  it('multiprocessing with processes off fails at once, naming allow_subprocesses (it hung until the timeout)', async () => {
    const programs = [
      'import multiprocessing\nwith multiprocessing.Pool(2) as p:\n    p.map(abs, [-1, -2])',
      'from concurrent.futures import ProcessPoolExecutor\nwith ProcessPoolExecutor(2) as ex:\n    list(ex.map(abs, [-1]))',
      'import multiprocessing\nmultiprocessing.Process(target=print).start()',
      'import multiprocessing as mp\nmp.get_context("spawn").Pool(1)',
    ];
    for (const code of programs) {
      const r = await run(code, undefined, 20_000);
      expect(r.status, code).toBe('failed');
      if (r.status !== 'failed') continue;
      expect(r.error.code, code).toBe('GUEST_ERROR');
      expect(r.error.name, code).toBe('PermissionError');
      expect(r.error.message).toContain('tool_constraints.allow_subprocesses');
      expect(r.error.message).toContain('multiprocessing');
      expect(r.resources.wallMs).toBeLessThan(10_000);
    }
  });

  it('multiprocessing with processes allowed starts a process (fork, a pipe, a lock)', async () => {
    const code = [
      'import multiprocessing as mp',
      'ctx = mp.get_context("fork")',
      'here, there = ctx.Pipe()',
      'def work(conn):',
      '    conn.send(sum(range(10)))',
      'p = ctx.Process(target=work, args=(there,))',
      'p.start()',
      'n = here.recv()',
      'p.join()',
      '[n, p.exitcode]',
    ].join('\n');
    expect(value(await run(code, { allowSubprocesses: true }))).toEqual([45, 0]);
  });

  it('multiprocessing.Pool and ProcessPoolExecutor with processes allowed finish (a Pool hung at its close)', async () => {
    const code = [
      'from concurrent.futures import ProcessPoolExecutor',
      'import multiprocessing as mp',
      'with ProcessPoolExecutor(2) as ex:',
      '    a = list(ex.map(abs, [-1, -2, -3]))',
      'with mp.Pool(2) as p:',
      '    b = p.map(abs, [-4, -5])',
      '    c = p.apply_async(abs, (-6,)).get(timeout=5)',
      'p = mp.Pool(2)',
      'd = p.map(abs, [-7])',
      'p.close()',
      'p.join()',
      '[a, b, c, d]',
    ].join('\n');
    const r = await run(code, { allowSubprocesses: true });
    expect(value(r)).toEqual([[1, 2, 3], [4, 5], 6, [7]]);
    expect(r.resources.wallMs).toBeLessThan(10_000);
  });

  it('without a last expression the value is the last statement run: an assignment, the branch taken, a loop', async () => {
    expect(value(await run('x = 3'))).toBe(3);
    expect(value(await run('a, b = 1, 2'))).toEqual([1, 2]);
    expect(value(await run('n = 1\nn += 2'))).toBe(3);
    expect(value(await run('x = 8\nif x <= 3:\n    y = 2\nelse:\n    y = 5'))).toBe(5);
    expect(value(await run('for i in range(3):\n    last = i * 10'))).toBe(20);
    expect(value(await run('try:\n    1 / 0\nexcept ZeroDivisionError:\n    r = "caught"'))).toBe('caught');
    // Statements without a value, and a function's own last statement, give None.
    expect(value(await run('x = 1\nimport math'))).toBeNull();
    expect(value(await run('def f():\n    y = 2'))).toBeNull();
    // A value that cannot leave the sandbox: None, with a warning saying why (an expression asking for it fails).
    const r = await run('g = (i for i in range(3))');
    expect(value(r)).toBeNull();
    expect(r.logs.some((l) => l.level === 'warn' && l.message.includes('generator'))).toBe(true);
    expect((await run('g = (i for i in range(3))\ng')).status).toBe('failed');
    // So is one over the result's size (a file read last): the program did its work.
    const big = await run('data = "x" * 20_000_000');
    expect(value(big)).toBeNull();
    expect(big.logs.some((l) => l.level === 'warn' && l.message.includes('bytes'))).toBe(true);
  });

  it('a program that is one fenced block runs without its fences, its lines kept', async () => {
    expect(value(await run('```python\nx = 1\nx + 1\n```\n'))).toBe(2);
    expect(value(await run('```py\ny = 2\n```<end_code>'))).toBe(2);
    expect(value(await run('```py\n3'))).toBe(3);
    const r = await run('```python\nx = 1\nraise ValueError("v")\n```');
    expect(r.status === 'failed' && r.error.line).toBe(3);
    // Two blocks, or text around one, are not a program.
    expect((await run('```python\n1\n```\n```python\n2\n```')).status).toBe('failed');
  });

  it('subprocess reached through asyncio asks the process policy', async () => {
    for (const code of [
      'import asyncio; asyncio.base_events.events.subprocess.run(["ls"])',
      'import asyncio\nasync def m():\n    await asyncio.create_subprocess_exec("ls")\nawait m()',
    ]) {
      const r = await run(code);
      expect(r.status === 'failed' && r.error.message, code).toContain('tool_constraints.allow_subprocesses');
    }
  });

  it('a dict with keys that are not all strings is a Map, shown in JSON as [key, value] pairs', async () => {
    const r = value(await run('{1: "a", (2, 3): "b", None: "c", 1.5: "d", "s": "e"}'));
    expect(r).toBeInstanceOf(Map);
    expect([...(r as Map<unknown, unknown>)]).toEqual([
      [1, 'a'],
      [[2, 3], 'b'],
      [null, 'c'],
      [1.5, 'd'],
      ['s', 'e'],
    ]);
    expect(toJsonView(r)).toEqual([
      [1, 'a'],
      [[2, 3], 'b'],
      [null, 'c'],
      [1.5, 'd'],
      ['s', 'e'],
    ]);
    // True == 1 in Python: one key, the first one's, with the last value.
    expect(toJsonView(value(await run('{1: "a", True: "b"}')))).toEqual([[1, 'b']]);
    // All keys strings: a plain object.
    expect(toJsonView(value(await run('{"1": "a", "b": 2}')))).toEqual({ 1: 'a', b: 2 });
  });
});
