// Runs the built CLI (dist/, built by `npm ci`/`npm install` through the prepare script) as child processes.
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const root = new URL('..', import.meta.url).pathname;
export const bin = join(root, 'bin/codecall.js');

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export function assertBuilt(): void {
  if (!existsSync(join(root, 'dist/cli/main.js')))
    throw new Error('dist/ is missing: run `npm run build` first');
}

/** Runs `codecall ARGS` to its end. */
export async function codecall(env: Record<string, string>, ...args: string[]): Promise<CliRun> {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, ...args], {
      cwd: root,
      timeout: 60_000,
      env: { ...process.env, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: err.code ?? -1, stdout: err.stdout ?? '', stderr: err.stderr ?? '' };
  }
}

/** Starts `codecall ARGS` in the background. */
export function startCodecall(env: Record<string, string>, ...args: string[]) {
  const child = spawn(process.execPath, [bin, ...args], { cwd: root, env: { ...process.env, ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
}

export function lastJson(stdout: string): Record<string, unknown> {
  const lines = stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1] ?? '') as Record<string, unknown>;
}

export async function until(check: () => Promise<boolean> | boolean, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * A fresh directory for one CLI test file, inside the repo (test-results/ is gitignored) so that a tools module
 * written there resolves `import ... from 'codecall'` to the built package by self-reference. Checks dist/ first.
 */
export async function cliTestDir(prefix: string): Promise<string> {
  assertBuilt();
  await mkdir(join(root, 'test-results'), { recursive: true });
  return mkdtemp(join(root, 'test-results', `${prefix}-`));
}
