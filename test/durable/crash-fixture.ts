// Shared by the crash tests: seeded randomness and worker processes that can be SIGKILLed.
import { spawn } from 'node:child_process';
import { join } from 'node:path';

const root = new URL('../..', import.meta.url).pathname;

/** mulberry32, so a failing run can be repeated from its seed. */
export function rng(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Starts `node --import tsx test/durable/SCRIPT ARGS`. `ready` resolves when the worker prints `ready` (on stdout
 * or stderr) once its store and sandbox are up, so a kill timed from it lands in the work, not the start-up (which
 * a loaded machine stretches past any fixed delay).
 */
export function startCrashWorker(script: string, args: readonly string[]) {
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'test/durable', script), ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let onReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
    if (stdout.includes('ready')) onReady();
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
    if (stderr.includes('ready\n')) onReady();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, ready, stderr: () => stderr };
}
