import { spawn } from 'node:child_process';
import type { MakeDirectoryOptions, PathLike, RmDirOptions } from 'node:fs';
import type * as FsPromises from 'node:fs/promises';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { detectCgroups } from '../../src/sandbox/python/cgroups.ts';
import type { Cgroup, CgroupManager } from '../../src/sandbox/python/cgroups.ts';

// A fake cgroup v2 tree in a temp dir. Like cgroupfs, mkdir there makes the interface files and rmdir
// takes them away (recording their last contents, so tests can see what destroy() wrote).
const fake = vi.hoisted(() => ({
  root: '\0unset',
  withoutKill: false,
  failWith: undefined as string | undefined,
  removed: new Map<string, Record<string, string>>(),
}));

vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof FsPromises>();
  const fs = await import('node:fs');
  const path = await import('node:path');
  const inFake = (p: PathLike): p is string => typeof p === 'string' && p.startsWith(`${fake.root}/`);
  const files: Record<string, string> = {
    'cgroup.procs': '',
    'cgroup.subtree_control': '',
    'cgroup.events': 'populated 0\nfrozen 0\n',
    'cgroup.freeze': '0',
    'cgroup.kill': '',
    'memory.max': 'max',
    'memory.swap.max': 'max',
    'memory.oom.group': '0',
    'memory.peak': '0',
    'memory.events': 'low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n',
    'pids.max': 'max',
    'cpu.max': 'max 100000',
  };
  async function mkdir(p: PathLike, options?: MakeDirectoryOptions): Promise<string | undefined> {
    const created = inFake(p) && !fs.existsSync(p);
    const result = await real.mkdir(p, options);
    if (created) {
      for (const [name, text] of Object.entries(files)) {
        if (name !== 'cgroup.kill' || !fake.withoutKill) fs.writeFileSync(path.join(p, name), text);
      }
    }
    return result;
  }
  async function rmdir(p: PathLike, options?: RmDirOptions): Promise<void> {
    if (inFake(p)) {
      const snapshot: Record<string, string> = {};
      for (const name of fs.readdirSync(p)) {
        const file = path.join(p, name);
        if (fs.statSync(file).isFile()) {
          snapshot[name] = fs.readFileSync(file, 'utf8');
          fs.rmSync(file);
        }
      }
      fake.removed.set(p, snapshot);
    }
    return real.rmdir(p, options);
  }
  async function writeFile(...args: Parameters<typeof real.writeFile>): Promise<void> {
    if (inFake(args[0] as PathLike) && fake.failWith) {
      throw Object.assign(new Error(`${fake.failWith}: refused by the fake`), { code: fake.failWith });
    }
    return real.writeFile(...args);
  }
  return { ...real, mkdir, rmdir, writeFile };
});

const text = (file: string): string => readFileSync(file, 'utf8').trim();

describe('cgroup v2 (fake tree)', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'codecall-cgroup-'));
    writeFileSync(join(root, 'cgroup.controllers'), 'cpuset cpu io memory hugetlb pids rdma misc\n');
    writeFileSync(join(root, 'cgroup.subtree_control'), '');
    Object.assign(fake, { root, withoutKill: false, failWith: undefined });
    fake.removed.clear();
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  async function manager(): Promise<CgroupManager> {
    const detection = await detectCgroups(root);
    if (!detection.manager) throw new Error(detection.reason);
    return detection.manager;
  }

  it('enables memory, pids and cpu for the codecall parent and its children', async () => {
    expect((await manager()).version).toBe(2);
    expect(text(join(root, 'cgroup.subtree_control'))).toBe('+memory +pids +cpu');
    expect(text(join(root, 'codecall', 'cgroup.subtree_control'))).toBe('+memory +pids +cpu');
  });

  it('leaves the root alone when its controllers are already enabled', async () => {
    writeFileSync(join(root, 'cgroup.subtree_control'), 'cpu memory pids\n');
    await manager();
    expect(text(join(root, 'cgroup.subtree_control'))).toBe('cpu memory pids');
  });

  it('writes each limit to its file', async () => {
    const group = await (await manager()).create('job', { memoryBytes: 64 << 20, pids: 20, cpuQuota: 0.5 });
    const dir = join(root, 'codecall', 'job');
    expect(group.path).toBe(dir);
    expect(text(join(dir, 'memory.max'))).toBe(String(64 << 20));
    expect(text(join(dir, 'memory.swap.max'))).toBe('0');
    expect(text(join(dir, 'memory.oom.group'))).toBe('1');
    expect(text(join(dir, 'pids.max'))).toBe('20');
    expect(text(join(dir, 'cpu.max'))).toBe('50000 100000');
  });

  it('leaves unset limits at the kernel defaults and rounds tiny CPU quotas up to 1ms', async () => {
    await (await manager()).create('job', { cpuQuota: 0.001 });
    const dir = join(root, 'codecall', 'job');
    expect(text(join(dir, 'memory.max'))).toBe('max');
    expect(text(join(dir, 'pids.max'))).toBe('max');
    expect(text(join(dir, 'cpu.max'))).toBe('1000 100000');
  });

  it('moves pids in and reads the peak and OOM kills', async () => {
    const group = await (await manager()).create('job', {});
    const dir = join(root, 'codecall', 'job');
    await group.add(4321);
    expect(text(join(dir, 'cgroup.procs'))).toBe('4321');
    writeFileSync(join(dir, 'memory.peak'), '12345\n');
    expect(await group.memoryPeakBytes()).toBe(12345);
    expect(await group.oomKilled()).toBe(false);
    writeFileSync(join(dir, 'memory.events'), 'low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n');
    expect(await group.oomKilled()).toBe(true);
    rmSync(join(dir, 'memory.peak')); // before Linux 5.19
    expect(await group.memoryPeakBytes()).toBeNull();
  });

  it('destroys with cgroup.kill where the kernel has it', async () => {
    const group = await (await manager()).create('job', {});
    const dir = join(root, 'codecall', 'job');
    await group.destroy();
    expect(existsSync(dir)).toBe(false);
    expect(fake.removed.get(dir)?.['cgroup.kill']).toBe('1');
    await group.destroy(); // a second call finds nothing to do
  });

  it('destroys by freeze, SIGKILL, thaw where it does not', async () => {
    fake.withoutKill = true;
    const group = await (await manager()).create('job', {});
    const dir = join(root, 'codecall', 'job');
    const child = spawn('/bin/sleep', ['30'], { stdio: 'ignore' });
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_code, signal) => {
        writeFileSync(join(dir, 'cgroup.events'), 'populated 0\nfrozen 0\n'); // what the kernel would show
        resolve(signal);
      }),
    );
    await group.add(child.pid!);
    writeFileSync(join(dir, 'cgroup.events'), 'populated 1\nfrozen 1\n');
    await group.destroy();
    expect(await exited).toBe('SIGKILL');
    expect(fake.removed.get(dir)).toMatchObject({ 'cgroup.freeze': '0', 'cgroup.procs': String(child.pid) });
  });

  it('refuses a CPU quota when the cpu controller is missing', async () => {
    writeFileSync(join(root, 'cgroup.controllers'), 'memory pids\n');
    const m = await manager();
    expect(text(join(root, 'codecall', 'cgroup.subtree_control'))).toBe('+memory +pids');
    await expect(m.create('job', { cpuQuota: 1 })).rejects.toMatchObject({ code: 'SANDBOX_UNAVAILABLE' });
    await expect(m.create('job2', { pids: 5 })).resolves.toBeDefined();
  });

  it('rejects bad names and limits', async () => {
    const m = await manager();
    for (const name of ['', '..', 'a/b', '.hidden']) {
      await expect(m.create(name, {})).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    }
    for (const limits of [{ pids: 0 }, { pids: 2.5 }, { memoryBytes: -1 }, { cpuQuota: Number.NaN }]) {
      await expect(m.create('job', limits)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    }
  });

  it('takes back the directory when a limit cannot be written', async () => {
    const m = await manager();
    fake.failWith = 'EACCES';
    await expect(m.create('job', { pids: 5 })).rejects.toMatchObject({ code: 'SANDBOX_UNAVAILABLE' });
    expect(existsSync(join(root, 'codecall', 'job'))).toBe(false);
  });

  it('says why when the tree is not usable', async () => {
    const reason = async (): Promise<string> => {
      const detection = await detectCgroups(root);
      return detection.manager === null ? detection.reason : 'detected';
    };
    fake.failWith = 'EROFS';
    expect(await reason()).toMatch(/not writable.*EROFS/);
    fake.failWith = 'EACCES';
    expect(await reason()).toMatch(/not writable.*EACCES/);
    writeFileSync(join(root, 'cgroup.controllers'), 'cpu io\n');
    expect(await reason()).toMatch(/lacks the memory, pids controller/);
  });

  it('falls back to v1 and says which v1 controller is missing', async () => {
    rmSync(join(root, 'cgroup.controllers'));
    mkdirSync(join(root, 'memory'));
    writeFileSync(join(root, 'memory', 'cgroup.procs'), '');
    const detection = await detectCgroups(root);
    expect(detection.manager === null && detection.reason).toMatch(/v1 pids controller/);
  });
});

// The real thing, on whichever cgroup version this machine has (as root only: cgroupfs is root's).
const real =
  process.getuid?.() === 0
    ? await detectCgroups()
    : { manager: null, reason: 'not running as root, so the cgroup tree is not writable' };
if (!real.manager) console.warn(`real cgroup tests skipped: ${real.reason}`);

describe.skipIf(!real.manager)('cgroups for real', () => {
  const m = real.manager!;
  let count = 0;
  const name = (): string => `test-${process.pid}-${(count += 1)}`;
  const dirs = (group: string): string[] =>
    m.version === 2
      ? [join('/sys/fs/cgroup/codecall', group)]
      : ['freezer', 'pids', 'memory', 'cpu'].map((c) => join('/sys/fs/cgroup', c, 'codecall', group));
  const file = (group: string, controller: string, name: string): string =>
    m.version === 2
      ? join('/sys/fs/cgroup/codecall', group, name)
      : join('/sys/fs/cgroup', controller, 'codecall', group, name);
  const procs = (group: string): number[] =>
    text(file(group, 'pids', 'cgroup.procs'))
      .split('\n')
      .filter(Boolean)
      .map(Number);

  afterAll(() => {
    // Leave the machine as we found it: the codecall parents go too, if nothing else uses them.
    for (const dir of m.version === 2
      ? ['/sys/fs/cgroup/codecall']
      : ['freezer', 'pids', 'memory', 'cpu'].map((c) => join('/sys/fs/cgroup', c, 'codecall'))) {
      try {
        rmdirSync(dir);
      } catch {
        // in use or never made
      }
    }
  });

  /** Starts Python held at a `read` so the pid is in the group before it execs. */
  async function startIn(group: Cgroup, code: string) {
    const child = spawn('/bin/sh', ['-c', 'read _ && exec /usr/bin/python3 -c "$1"', 'sh', code], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    );
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    await group.add(child.pid!);
    child.stdin.end('\n');
    return { child, exited, stdout: () => stdout };
  }

  const alive = (pid: number): boolean => {
    try {
      return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    } catch {
      return false;
    }
  };

  it('holds a fork bomb to pids.max and destroy() ends all of it', async () => {
    const id = name();
    const group = await m.create(id, { pids: 20, memoryBytes: 64 << 20 });
    const bomb = String.raw`
import os, time
me = os.getpid()
end = time.time() + 1.5
fails = 0
while time.time() < end:
    try:
        if os.fork() == 0:
            continue
    except OSError:
        fails += 1
        time.sleep(0.005)
if os.getpid() == me:
    print(fails, flush=True)
time.sleep(60)
`;
    const run = await startIn(group, bomb);
    const seen = new Set<number>();
    let most = 0;
    while (run.stdout() === '') {
      const now = procs(id);
      now.forEach((pid) => seen.add(pid));
      most = Math.max(most, now.length, Number(text(file(id, 'pids', 'pids.current'))));
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(Number(run.stdout().trim())).toBeGreaterThan(0); // forks were refused
    expect(most).toBeLessThanOrEqual(20);
    expect(most).toBeGreaterThanOrEqual(10); // and the bomb did go off
    await group.destroy();
    expect((await run.exited).signal).toBe('SIGKILL');
    expect([...seen].filter(alive)).toEqual([]);
    for (const dir of dirs(id)) expect(existsSync(dir)).toBe(false);
  });

  it('OOM-kills a memory hog at memoryBytes', async () => {
    const id = name();
    const group = await m.create(id, { pids: 20, memoryBytes: 64 << 20 });
    const hog = 'chunks = []\nwhile True: chunks.append(b"x" * (8 << 20))';
    const run = await startIn(group, hog);
    expect((await run.exited).signal).toBe('SIGKILL');
    expect(await group.oomKilled()).toBe(true);
    const peak = await group.memoryPeakBytes();
    if (peak !== null) {
      expect(peak).toBeGreaterThan(32 << 20);
      expect(peak).toBeLessThanOrEqual(64 << 20);
    }
    await group.destroy();
    for (const dir of dirs(id)) expect(existsSync(dir)).toBe(false);
  });

  it('throttles to cpuQuota', async () => {
    const id = name();
    const group = await m.create(id, { cpuQuota: 0.2 });
    if (m.version === 2) expect(text(file(id, 'cpu', 'cpu.max'))).toBe('20000 100000');
    else expect(text(file(id, 'cpu', 'cpu.cfs_quota_us'))).toBe('20000');
    const run = await startIn(group, 'import time\nend = time.time() + 0.5\nwhile time.time() < end: pass');
    expect((await run.exited).code).toBe(0);
    const stat = text(file(id, 'cpu', 'cpu.stat'));
    expect(Number(/nr_throttled (\d+)/.exec(stat)?.[1])).toBeGreaterThan(0);
    await group.destroy();
  });

  it('refuses a name in use and destroys an empty group twice', async () => {
    const id = name();
    const group = await m.create(id, {});
    await expect(m.create(id, {})).rejects.toMatchObject({ code: 'SANDBOX_UNAVAILABLE' });
    expect(await group.oomKilled()).toBe(false);
    await group.destroy();
    await group.destroy();
    for (const dir of dirs(id)) expect(existsSync(dir)).toBe(false);
  });
});
