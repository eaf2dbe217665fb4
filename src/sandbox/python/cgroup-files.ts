import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

// Small helpers over cgroupfs interface files, shared by the v1 and v2 managers in cgroups.ts.

export const errno = (error: unknown): string | undefined =>
  error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
export const message = (error: unknown): string => (error instanceof Error ? error.message : String(error));

export async function read(file: string): Promise<string | null> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if (errno(error) === 'ENOENT') return null;
    throw error;
  }
}

export const write = (file: string, value: string | number): Promise<void> => writeFile(file, String(value));

export async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

/** Interface files that depend on kernel version or config are written only where the kernel made them. */
export async function writeIfPresent(file: string, value: string | number): Promise<void> {
  if (await exists(file)) await write(file, value);
}

/** Parses flat-keyed files like memory.events, cgroup.events and memory.oom_control. */
export async function keyed(file: string): Promise<Map<string, number>> {
  const fields = new Map<string, number>();
  for (const line of ((await read(file)) ?? '').split('\n')) {
    const [key, value] = line.trim().split(/\s+/);
    if (key && value !== undefined) fields.set(key, Number(value));
  }
  return fields;
}

/** The processes (thread group leaders) in a group; children a process forks are listed too. */
export async function pidsIn(dir: string): Promise<number[]> {
  const text = (await read(join(dir, 'cgroup.procs'))) ?? '';
  return text.split('\n').filter(Boolean).map(Number);
}

export function killAll(pids: readonly number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch (error) {
      if (errno(error) !== 'ESRCH') throw error;
    }
  }
}

/** Polls `check` every 10ms until it holds (true) or `timeoutMs` passes (false). */
export async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(10);
  }
}
