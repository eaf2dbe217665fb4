import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;
const bin = join(root, 'bin/codecall.js');

interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

async function codecall(...args: string[]): Promise<CliRun> {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, ...args], { cwd: root, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: err.code ?? -1, stdout: err.stdout ?? '', stderr: err.stderr ?? '' };
  }
}

function lastJson(stdout: string): Record<string, unknown> {
  const lines = stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1] ?? '') as Record<string, unknown>;
}

describe('codecall exec (the built CLI, as a child process)', () => {
  beforeAll(() => {
    // The CLI runs from dist/, which `npm install`/`npm ci` build through the prepare script.
    if (!existsSync(join(root, 'dist/cli/main.js')))
      throw new Error('dist/ is missing: run `npm run build` first');
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
