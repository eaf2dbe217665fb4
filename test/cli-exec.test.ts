import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, codecall as codecallWith, lastJson } from './cli-fixture.ts';

const codecall = (...args: string[]) => codecallWith({}, ...args);

describe('codecall exec (the built CLI, as a child process)', () => {
  beforeAll(() => {
    // The CLI runs from dist/, which `npm install`/`npm ci` build through the prepare script.
    assertBuilt();
  });

  it('runs examples/parallel.ts with the example tools', async () => {
    const r = await codecall('exec', 'examples/parallel.ts', '--tools', 'examples/tools.ts', '--json');
    expect(r.code).toBe(0);
    const out = lastJson(r.stdout);
    expect(out.status).toBe('succeeded');
    expect(out.error).toBeNull();
    expect(out.result).toMatchObject({ warmest: 'Tokyo', fahrenheit: 70 });
    expect(out.logs).toEqual([{ level: 'log', message: 'fetched 3 forecasts in parallel' }]);
    expect(out.resources).toMatchObject({ tool_calls: 4 });
    expect(r.stderr).toContain('fetched 3 forecasts in parallel');
  });

  it('prints the result and streams logs without --json', async () => {
    const r = await codecall('exec', 'examples/errors.js', '--tools', 'examples/tools.ts');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Atlantis: UNKNOWN_CITY');
    expect(r.stdout).toContain('unknown tool: NoSuchToolError');
  });

  it('exits non-zero with a coded error when the program fails', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'codecall-cli-'));
    const file = join(dir, 'loop.js');
    await writeFile(file, 'while (true) {}\n');
    const r = await codecall('exec', file, '--timeout', '0.3', '--json');
    expect(r.code).toBe(1);
    const out = lastJson(r.stdout);
    expect(out.status).toBe('failed');
    expect(out.error).toMatchObject({ code: 'TIMEOUT' });
    const cpu = await codecall('exec', file, '--timeout', '30', '--cpu', '0.2', '--json');
    expect(cpu.code).toBe(1);
    expect(lastJson(cpu.stdout).error).toMatchObject({ code: 'CPU_LIMIT' });
  });

  it("prints a failure with the exception's type, line and column in the program as written", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'codecall-cli-'));
    const file = join(dir, 'bad.ts');
    await writeFile(file, 'const a: number = 1;\nconst o: any = null;\n  o.x;\n');
    const r = await codecall('exec', file, '--json');
    expect(r.code).toBe(1);
    expect(lastJson(r.stdout).error).toEqual({
      code: 'GUEST_ERROR',
      message: expect.stringContaining("'x'") as unknown,
      name: 'TypeError',
      line: 3,
      column: 3,
    });
    const plain = await codecall('exec', file);
    expect(plain.stderr).toContain('(line 3, column 3)');
  });

  it('prints a result without a return, as JSON.stringify gives it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'codecall-cli-'));
    const file = join(dir, 'value.js');
    await writeFile(file, 'const v = { n: NaN, i: -Infinity, u: undefined, l: [undefined, 1] };\nv\n');
    const r = await codecall('exec', file, '--json');
    expect(r.code).toBe(0);
    expect(lastJson(r.stdout).result).toEqual({ n: null, i: null, l: [null, 1] });
    expect(r.stdout).not.toContain('"u"');
  });

  it('seeds Math.random with --seed', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'codecall-cli-'));
    const file = join(dir, 'rand.ts');
    await writeFile(file, 'const xs: number[] = [Math.random(), Math.random()];\nreturn xs;\n');
    const a = lastJson((await codecall('exec', file, '--seed', '7', '--json')).stdout);
    const b = lastJson((await codecall('exec', file, '--seed', '7', '--json')).stdout);
    const c = lastJson((await codecall('exec', file, '--seed', '8', '--json')).stdout);
    expect(a.result).toEqual(b.result);
    expect(a.result).not.toEqual(c.result);
  });

  it('reports usage errors with exit code 2', async () => {
    const missing = await codecall('exec', 'no/such/file.js');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('NOT_FOUND');
    const badTools = await codecall('exec', 'examples/parallel.ts', '--tools', 'examples/parallel.ts');
    expect(badTools.code).toBe(2);
    expect(badTools.stderr).toMatch(/tools module/);
    const badFlag = await codecall('exec', 'examples/parallel.ts', '--timeout', 'abc');
    expect(badFlag.code).toBe(2);
  });
});

describe('codecall exec FILE.py (the built CLI)', () => {
  it('runs Python with input files, saves its artifacts, and keeps the --json contract', async () => {
    const { probePython } = await import('../src/sandbox/index.ts');
    const probe = await probePython();
    if (!probe.ok) {
      console.warn(`[cli-exec] python skipped: ${probe.reason}`);
      return;
    }
    const dir = await mkdtemp(join(tmpdir(), 'codecall-cli-py-'));
    await writeFile(join(dir, 'in.csv'), 'a,b\n1,2\n3,4\n');
    await writeFile(
      join(dir, 'sum.py'),
      'import csv\nrows = list(csv.DictReader(open("in.csv")))\nprint("rows:", len(rows))\nopen("sum.txt", "w").write(str(sum(int(r["b"]) for r in rows)))\n{"rows": len(rows)}\n',
    );
    const out = join(dir, 'out');
    const r = await codecall(
      'exec',
      join(dir, 'sum.py'),
      '--file',
      join(dir, 'in.csv'),
      '--artifacts',
      out,
      '--json',
    );
    expect(r.code).toBe(0);
    expect(lastJson(r.stdout)).toMatchObject({
      status: 'succeeded',
      result: { rows: 2 },
      logs: [{ level: 'log', message: 'rows: 2' }],
      artifacts: [{ name: 'sum.txt', size: 1 }],
    });
    const { readFile } = await import('node:fs/promises');
    expect(await readFile(join(out, 'sum.txt'), 'utf8')).toBe('6');
    const refused = await codecall('exec', join(dir, 'sum.py'), '--allowed-libraries', 'json');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      "import of 'csv' is not allowed for this task (allowed_libraries: json)",
    );
    // A malformed pattern is a usage error with its code, before any sandbox starts (ADR 0041).
    const malformed = await codecall('exec', join(dir, 'sum.py'), '--allowed-libraries', 'json,csv*');
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain(
      'error INVALID_LIBRARY_PATTERN: --allowed-libraries: "csv*" is not a library pattern',
    );
  });
});
